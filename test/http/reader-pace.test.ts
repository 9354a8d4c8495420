/**
 * A streamed file is written at its reader's pace (`taken`): the writing waits while the reader's
 * buffers are full, and a reader that stops, goes away, or takes the file too slowly on the whole
 * ends it, so what the writing holds is given back.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { taken } from '../../src/http/reader-pace.js';

const PATIENCE_MS = 50;
const PIECE = 'x'.repeat(64);
const never = () => undefined;

/** A file whose buffers hold less than a piece: every write waits for its reader. */
const fullAfterOnePiece = () => new PassThrough({ highWaterMark: 16 });

test('a piece the buffers have room for is written at once', async () => {
  const file = new PassThrough();
  await taken(file, PIECE, PATIENCE_MS, never);
  assert.equal(file.read()?.toString(), PIECE);
});

test('a reader that takes nothing for the patience is broken off, and the writing stops waiting', async () => {
  const file = fullAfterOnePiece();
  await assert.rejects(taken(file, PIECE, PATIENCE_MS, never), { message: `the reader of the file took nothing for ${PATIENCE_MS} ms` });
  assert.equal(file.listenerCount('drain'), 0, 'no listener left on the file');
  assert.equal(file.listenerCount('close'), 0);
});

test('a reader that takes the file within the patience lets the writing go on', async () => {
  const file = fullAfterOnePiece();
  const written = taken(file, PIECE, PATIENCE_MS * 10, never);
  setTimeout(() => file.resume(), PATIENCE_MS);
  await written;
  assert.equal(file.listenerCount('drain'), 0, 'no listener left on the file');
});

test('a reader that drains the buffers too slowly on the whole is broken off as it drains them, told how', async () => {
  const file = fullAfterOnePiece();
  const written = taken(file, PIECE, PATIENCE_MS, () => 'slower than 16384 bytes a second');
  file.resume();
  await assert.rejects(written, { message: 'the reader of the file took it slower than 16384 bytes a second' });
});

test('a reader that goes away ends the writing, whether it was waiting or not', async () => {
  const waiting = fullAfterOnePiece();
  const written = taken(waiting, PIECE, PATIENCE_MS * 100, never);
  waiting.destroy();
  await assert.rejects(written, { message: 'the reader of the file went away' });
  await assert.rejects(taken(waiting, PIECE, PATIENCE_MS, never), { message: 'the reader of the file went away' });
});
