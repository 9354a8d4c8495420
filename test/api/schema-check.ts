/**
 * Checks a JSON value against a schema of the service's OpenAPI document: every property named,
 * no other property present, each of the declared type, pattern and format. Small on purpose:
 * it understands the subset of JSON Schema our document uses, and fails on anything else.
 */
import assert from 'node:assert/strict';

type Schema = Record<string, unknown>;

export function resolve(document: Schema, schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  const found = ((document.components as Schema).schemas as Schema)[name];
  assert.ok(found, `unresolved ${ref}`);
  return found as Schema;
}

export function checkAgainstSchema(document: Schema, schema: Schema, value: unknown, path = '$'): void {
  const s = resolve(document, schema);
  switch (s.type) {
    case 'object': {
      assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `${path} is an object`);
      const properties = s.properties as Record<string, Schema>;
      assert.deepEqual(Object.keys(value as object).sort(), Object.keys(properties).sort(), `${path} has exactly the documented fields`);
      assert.deepEqual([...(s.required as string[])].sort(), Object.keys(properties).sort(), `${path}: every field is required`);
      assert.equal(s.additionalProperties, false, `${path} allows no other field`);
      for (const [name, property] of Object.entries(properties)) {
        checkAgainstSchema(document, property, (value as Record<string, unknown>)[name], `${path}.${name}`);
      }
      return;
    }
    case 'array':
      assert.ok(Array.isArray(value), `${path} is an array`);
      (value as unknown[]).forEach((item, i) => checkAgainstSchema(document, s.items as Schema, item, `${path}[${i}]`));
      return;
    case 'integer':
      assert.ok(Number.isSafeInteger(value), `${path} is an integer`);
      if (typeof s.minimum === 'number') assert.ok((value as number) >= s.minimum, `${path} ≥ ${s.minimum}`);
      if (typeof s.maximum === 'number') assert.ok((value as number) <= s.maximum, `${path} ≤ ${s.maximum}`);
      return;
    case 'boolean':
      assert.equal(typeof value, 'boolean', `${path} is a boolean`);
      return;
    case 'string':
      assert.equal(typeof value, 'string', `${path} is a string`);
      if (typeof s.pattern === 'string') assert.match(value as string, new RegExp(s.pattern), `${path} matches its pattern`);
      if (typeof s.maxLength === 'number') assert.ok((value as string).length <= s.maxLength, `${path} is at most ${s.maxLength} long`);
      if (s.format === 'uri') assert.doesNotThrow(() => new URL(value as string), `${path} is an absolute URL`);
      if (Array.isArray(s.enum)) assert.ok(s.enum.includes(value), `${path} is one of ${s.enum.join(', ')}`);
      return;
    default:
      assert.fail(`${path}: schema type ${String(s.type)} is not understood by this check`);
  }
}

/** The 200 response schema of `GET path` in the document. */
export function successSchema(document: Schema, path: string): Schema {
  const operation = ((document.paths as Schema)[path] as Schema).get as Schema;
  const ok = (operation.responses as Schema)['200'] as Schema;
  return ((ok.content as Schema)['application/json'] as Schema).schema as Schema;
}
