/**
 * The schema of a form field a person types or pastes. It has no cap: a schema's refusal is the
 * generic 400 page, which loses what was typed and talks to an app. The body limit bounds the field,
 * and the route's form says what is too long or wrong with it, in the reader's language.
 */
export const TYPED_FIELD = { type: 'string' } as const;
