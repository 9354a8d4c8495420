/**
 * /docs shows every example as a quick start (issue 17), and the MCP agent in "Connect an AI agent
 * (MCP)" (issue 33): the files exactly as `examples/` has them, which the other tests in this
 * folder run end to end, with the issuer's default replaced by BASE_URL. Every folder of
 * `examples/` is listed and tested, so none can drift or be forgotten.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { AGENT_EXAMPLE, EXAMPLES, EXAMPLE_DEFAULT_ISSUER } from '../../src/http/views/docs-examples.js';
import { escapeHtml } from '../../src/http/views/html.js';
import type { TestApp } from '../support/app.js';
import { startService } from './support.js';

describe('/docs quick starts', () => {
  let service: TestApp;
  before(async () => {
    service = await startService();
  });
  after(async () => service?.close());

  test('every example folder is on /docs and has its end-to-end test', () => {
    const folders = readdirSync('examples', { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
    const names = [...EXAMPLES.map((example) => example.name), AGENT_EXAMPLE.name];
    assert.deepEqual(names.sort(), folders);
    for (const name of names) {
      assert.ok(existsSync(`test/examples/${name}.test.ts`), `test/examples/${name}.test.ts`);
      assert.match(readFileSync('examples/README.md', 'utf8'), new RegExp(`\\(${name}/\\)`), `examples/README.md links ${name}/`);
    }
  });

  test('"Connect an AI agent (MCP)" shows the tested agent with this service as the issuer, and is in the contents', async () => {
    const page = await (await fetch(`${service.baseUrl}/docs`)).text();
    assert.ok(page.includes('<a href="#mcp">Connect an AI agent (MCP)</a>'));
    const section = page.slice(page.indexOf('<section id="mcp">'), page.indexOf('</section>', page.indexOf('<section id="mcp">')));
    assert.ok(section.includes(`POST ${service.baseUrl}/api/open/v1/mcp`));
    const source = readFileSync(`examples/${AGENT_EXAMPLE.name}/${AGENT_EXAMPLE.file}`, 'utf8');
    assert.ok(section.includes(escapeHtml(source.replaceAll(EXAMPLE_DEFAULT_ISSUER, service.baseUrl))), 'the agent is shown as it is');
    assert.ok(section.includes(`npm install ${AGENT_EXAMPLE.packages}`));
  });

  test('each quick start shows the tested files with this service as the issuer', async () => {
    const page = await (await fetch(`${service.baseUrl}/docs`)).text();
    assert.ok(page.includes('<a href="#quick-starts">Quick starts per library</a>'));
    for (const example of EXAMPLES) {
      assert.ok(page.includes(`id="example-${example.name}"`), example.name);
      assert.ok(page.includes(`href="#${example.library}"`), `${example.name} links its common errors`);
      for (const file of example.files) {
        const source = readFileSync(`examples/${example.name}/${file}`, 'utf8');
        const shown = source.replaceAll(EXAMPLE_DEFAULT_ISSUER, service.baseUrl);
        assert.ok(page.includes(escapeHtml(shown)), `examples/${example.name}/${file} is shown as it is`);
        if (source.includes('ISSUER ??')) assert.ok(shown.includes(`process.env.ISSUER ?? '${service.baseUrl}'`), `${example.name}/${file}: the issuer is filled in`);
      }
    }
    assert.ok(!page.includes(EXAMPLE_DEFAULT_ISSUER), 'no example shows another issuer than this service');
  });

  test('every library tested in process is under "Other libraries" on /docs, with the setting its test uses', async () => {
    const page = await (await fetch(`${service.baseUrl}/docs`)).text();
    const others = page.slice(page.indexOf('id="lib-others"'));
    const settings: Record<string, string> = {
      'express-openid-connect': "response_type: 'code'",
      'openid-client-v5': 'openid-client 5',
      'passport-openidconnect': '<code>nonce</code> option',
      'badgateway-oauth2-client': '@badgateway/oauth2-client',
      grant: "scope_delimiter: ' '",
    };
    const tested = readdirSync('test/examples').filter((file) => file.endsWith('-library.test.ts')).map((file) => file.replace('-library.test.ts', '')).sort();
    assert.deepEqual(tested, Object.keys(settings).sort());
    for (const [library, setting] of Object.entries(settings)) assert.ok(others.includes(setting), `${library}: ${setting}`);
  });
});
