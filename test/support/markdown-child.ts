/**
 * A child process for test/core/pathological-bodies.test.ts: makes the excerpt and the page of
 * every body it is sent and answers with both, so the test can end it when one takes too long.
 */
import { layOut } from '../../src/core/community/markdown.js';
import { excerpt } from '../../src/core/community/posts.js';

process.on('message', (body: string) => {
  process.send!({ excerpt: excerpt(body), page: layOut(body).html });
});
process.send!('ready');
