/** Thrown where escaping a character above U+00FF would change what the file does; names the place. */
export class OneByteSourceError extends Error {}
/** `text` with every character above U+00FF escaped, meaning exactly the same. */
export function oneByteSource(text: string, file: string): string;
