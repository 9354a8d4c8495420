/** Node's flags for the service, as `npm start` gives them. */
export function serviceNodeFlags(): string[];
