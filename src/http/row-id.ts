/**
 * The one schema of a numeric id in a path (`/posts/{id}`, `/avatars/{id}`, `/admin/members/{id}`).
 * A page has one address: the id is its decimal digits without a leading zero, so `0x10`, `1e1`,
 * `+16`, `016` and `16.0`, which ajv's type coercion read as 16, name nothing. The string is
 * checked first, then coerced to the integer the handler reads, at most what both databases' id
 * column holds (a 32-bit integer), so no query PostgreSQL would refuse is ever made. A path
 * parameter that fails its schema names nothing: 404 (`toClientError`).
 */
export const ROW_ID = {
  allOf: [{ type: 'string', pattern: '^[1-9][0-9]{0,9}$' }, { type: 'integer', maximum: 2_147_483_647 }],
} as const;

/** The `params` schema of a route whose one path parameter is `id`, a row id. */
export const idParams = { type: 'object', properties: { id: ROW_ID }, required: ['id'] } as const;

const ROW_ID_DIGITS = new RegExp(ROW_ID.allOf[0].pattern);

/** Whether `value`, a path parameter as sent, passes `ROW_ID`: for a hook that runs before the schema is applied. */
export function isRowId(value: string): boolean {
  return ROW_ID_DIGITS.test(value) && Number(value) <= ROW_ID.allOf[1].maximum;
}
