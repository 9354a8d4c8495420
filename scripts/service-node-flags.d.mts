/** Node's flags for the service, as `npm start` gives them. */
export function serviceNodeFlags(): string[];
/** The environment `npm start` sets for the service's process (glibc's malloc settings). */
export function serviceProcessEnv(): Record<string, string>;
/** The file `npm start` runs: the bundled server. */
export function serviceEntry(): string;
