// What the profile summaries (profile-summary.mjs, allocation-summary.mjs) share: how a V8 call
// frame is named, and how their rows are ranked.

/** A frame's script, shortened to where it lives: `node_modules/…`, `dist/…`, or as V8 names it. */
export const scriptOf = (frame) => frame.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, 'node_modules/').replace(/.*\/dist\//, 'dist/');

/** A frame as a row names it: its function, script and line. */
export const frameLabel = (frame) => `${frame.functionName || '(anonymous)'}  ${scriptOf(frame)}:${frame.lineNumber + 1}`;

/** The `top` entries of `map` (label → amount), largest first. */
export const ranked = (map, top) => [...map].sort((a, b) => b[1] - a[1]).slice(0, top);
