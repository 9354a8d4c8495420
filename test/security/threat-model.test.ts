/**
 * The threat model lists no threat without a named test (issue 7): every section of
 * docs/threat-model.md names at least one test, and every named test exists, by file and by its
 * exact name (a `${…}` in a test's source matches its expansion).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The names of the tests a file declares, as patterns. */
function testNames(source: string): RegExp[] {
  const names: RegExp[] = [];
  for (const match of source.matchAll(/\btest\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g)) {
    const [, quote, raw] = match as unknown as [string, string, string];
    const text = raw.replace(/\\(.)/g, '$1');
    const pattern = quote === '`' ? text.split(/\$\{[^}]+\}/).map(escape).join('.+') : escape(text);
    names.push(new RegExp(`^${pattern}$`));
  }
  return names;
}

test('every threat in docs/threat-model.md names a test, and every named test exists', () => {
  const doc = readFileSync('docs/threat-model.md', 'utf8');
  const sections = doc.split(/^### /m).slice(1);
  assert.ok(sections.length >= 20, 'the threats are listed');
  for (const section of sections) {
    const title = section.split('\n')[0]!;
    const cited = [...section.matchAll(/^\s+- `(test\/[^`]+\.test\.ts)` › (.+)$/gm)];
    assert.ok(cited.length > 0, `${title}: no test named`);
    assert.match(section, /- Defence: .*`src\//, `${title}: no defence in our code named`);
    for (const [, file, name] of cited as unknown as Array<[string, string, string]>) {
      assert.ok(existsSync(file), `${title}: ${file} does not exist`);
      const names = testNames(readFileSync(file, 'utf8'));
      assert.ok(names.some((pattern) => pattern.test(name.trim())), `${title}: ${file} has no test named "${name}"`);
    }
  }
});
