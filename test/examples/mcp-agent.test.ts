/**
 * examples/mcp-agent ("Connect an AI agent (MCP)" on /docs): the agent script as a developer runs
 * it, with the official MCP SDK's client and a personal token, against the real service. What it
 * prints is exactly what /me and /me/posts answer; a token without posts:read stops it at the
 * 403 challenge that names the scope.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { writePost } from '../../src/core/community/posts.js';
import { createPersonalToken } from '../../src/core/credentials/personal-tokens.js';
import type { TestApp } from '../support/app.js';
import { USERNAME, startService } from './support.js';

/** Runs the agent as its header says; resolves with its exit code and output. */
function runAgent(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['examples/mcp-agent/agent.mjs'], { timeout: 60_000, env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('examples/mcp-agent', () => {
  let service: TestApp;
  let userId: number;
  before(async () => {
    service = await startService();
    userId = (await service.deps.stores.users.findByUsername(USERNAME))!.id;
    for (const title of ['Hello, agents', 'Second thoughts']) {
      await writePost(service.deps.stores, service.clock, { authorId: userId, title, body: 'Some **words**.', category: 'General', status: 'published' });
    }
  });
  after(async () => service?.close());

  const token = async (scopes: string[]) =>
    (await createPersonalToken(service.deps.stores, service.clock, service.deps.tokenMarks, { userId, name: 'agent', scopes, expiresInDays: 30 })).token;
  const api = async (path: string, bearer: string) =>
    (await fetch(`${service.baseUrl}/api/open/v1${path}`, { headers: { authorization: `Bearer ${bearer}` } })).text();

  test('the agent lists both tools and prints exactly what /me and /me/posts answer', async () => {
    const bearer = await token(['profile:read', 'posts:read']);
    const run = await runAgent({ ISSUER: service.baseUrl, ACCESS_TOKEN: bearer });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const lines = run.stdout.trim().split('\n');
    assert.deepEqual(lines.filter((line) => line.startsWith('tool ')).map((line) => line.split(':')[0]), ['tool get_profile', 'tool list_posts']);
    assert.ok(lines.includes(`get_profile ${await api('/me', bearer)}`), run.stdout);
    assert.ok(lines.includes(`list_posts ${await api('/me/posts?page=0&size=5', bearer)}`), run.stdout);
  });

  test('a token without posts:read stops the agent at the 403 that names the scope', async () => {
    const run = await runAgent({ ISSUER: service.baseUrl, ACCESS_TOKEN: await token(['profile:read']) });
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /insufficient_scope/);
    assert.match(run.stderr, /posts:read/);
  });
});
