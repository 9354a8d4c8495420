/** Node's flags for the service on the database `databaseUrl` names (DATABASE_URL's by default), as `npm start` gives them. */
export function serviceNodeFlags(databaseUrl?: string): string[];
/** The environment `npm start` sets for the service's process (the allocators' settings). */
export function serviceProcessEnv(): Record<string, string>;
/** The file `npm start` runs: the bundled server. */
export function serviceEntry(): string;
