/** Builds dist/ unless it matches the sources (or always, with `force`); throws when tsc fails. */
export function ensureBuilt(options?: { force?: boolean }): { built: boolean };
/** Whether dist/ was built from the sources as they are. */
export function isBuilt(): boolean;
/** The SHA-256 of every build input. */
export function sourceHash(): string;
