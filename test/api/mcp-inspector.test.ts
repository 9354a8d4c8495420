/**
 * The MCP Inspector's command line (`@modelcontextprotocol/inspector-cli`, run from node_modules,
 * no network) lists the MCP server's tools with a token from the code flow in its Authorization
 * header, and is refused without one (INTERFACE section 13, issue 33 item 4).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDatabase } from '../support/databases.js';
import { newClient, obtainTokens, signedInBrowser, startOAuthApp } from '../oauth/helpers.js';

/** The Inspector's command line as npm installs it (`mcp-inspector-cli`). */
const INSPECTOR_CLI = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build', 'cli.js');

/**
 * Runs the Inspector's command line; resolves with its exit code and output (it never needs the
 * network). It runs in its own build folder: 1.0.3 reads its package.json by a path it checks
 * against the working directory (`existsSync('../package.json')`) and fails anywhere else.
 */
function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const options = { cwd: dirname(INSPECTOR_CLI), timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' } };
    execFile(process.execPath, [INSPECTOR_CLI, '--cli', ...args], options, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

forEachDatabase("the MCP Inspector's command line", (database) => {
  let t: TestApp;
  let mcp: string;
  before(async () => {
    t = await startOAuthApp(database);
    mcp = `${t.baseUrl}/api/open/v1/mcp`;
  });
  after(() => t.close());

  test('the Inspector lists both tools with a bearer token in its header, and is refused without one', async () => {
    const { browser } = await signedInBrowser(t);
    const { access_token: token } = await obtainTokens(t, browser, await newClient(t));
    const listed = await inspector([mcp, '--transport', 'http', '--method', 'tools/list', '--header', `Authorization: Bearer ${token}`]);
    assert.equal(listed.code, 0, `${listed.stdout}\n${listed.stderr}`);
    const { tools } = JSON.parse(listed.stdout) as { tools: Array<{ name: string; outputSchema?: unknown }> };
    assert.deepEqual(tools.map((tool) => tool.name), ['get_profile', 'list_posts']);
    const called = await inspector([mcp, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'get_profile', '--header', `Authorization: Bearer ${token}`]);
    assert.equal(called.code, 0, `${called.stdout}\n${called.stderr}`);
    const me = await fetch(`${t.baseUrl}/api/open/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(JSON.stringify((JSON.parse(called.stdout) as { structuredContent: unknown }).structuredContent), await me.text());
    const refused = await inspector([mcp, '--transport', 'http', '--method', 'tools/list']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /invalid_token/);
  });
});
