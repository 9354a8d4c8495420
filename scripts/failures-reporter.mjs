// A test reporter that repeats every failure at the very end of the run, after the totals: a CI log
// is often read only by its tail, and a failure printed an hour earlier among 4,000 passing tests
// is otherwise out of sight. One line per failed test: its name, its file, and the first
// lines of what it threw.
export default async function* failuresAtTheEnd(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type === 'test:fail') failed.push(event.data);
  }
  if (failed.length === 0) return;
  yield `# failed, repeated from above: ${failed.length}\n`;
  for (const test of failed) {
    const error = test.details?.error;
    const thrown = error?.cause ?? error;
    const said = String(thrown?.message ?? thrown).split('\n').slice(0, 4).join(' | ').slice(0, 600);
    yield `# ${'  '.repeat(test.nesting)}${test.name} (${test.file ?? 'unknown file'}): ${said}\n`;
  }
}
