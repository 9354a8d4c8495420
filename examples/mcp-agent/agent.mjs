/**
 * An AI agent reading Community through its MCP server (`/api/open/v1/mcp`) with the official MCP
 * TypeScript SDK's client over Streamable HTTP: it lists the tools, calls get_profile and
 * list_posts, and prints their structured answers, which are exactly what GET /api/open/v1/me and
 * /me/posts answer. This is what an agent framework does before it hands the tools to a model.
 *
 *   ISSUER=http://localhost:3000 ACCESS_TOKEN=svcp_… node examples/mcp-agent/agent.mjs
 *
 * ACCESS_TOKEN is a personal token made under Settings → API tokens with the scopes profile:read
 * and posts:read, or an access token your app got by the authorization code flow.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const ISSUER = process.env.ISSUER ?? 'http://localhost:3000';
const ACCESS_TOKEN = process.env.ACCESS_TOKEN;
if (!ACCESS_TOKEN) {
  console.error('Set ACCESS_TOKEN to a personal token with profile:read and posts:read (Settings → API tokens).');
  process.exit(2);
}

// The token goes in the Authorization header of every request, as for the REST API.
const transport = new StreamableHTTPClientTransport(new URL(`${ISSUER}/api/open/v1/mcp`), {
  requestInit: { headers: { Authorization: `Bearer ${ACCESS_TOKEN}` } },
});
const client = new Client({ name: 'community-example-agent', version: '1.0.0' });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  for (const tool of tools) console.log(`tool ${tool.name}: ${tool.description}`);
  const profile = await client.callTool({ name: 'get_profile', arguments: {} });
  console.log(`get_profile ${JSON.stringify(profile.structuredContent)}`);
  const posts = await client.callTool({ name: 'list_posts', arguments: { page: 0, size: 5 } });
  console.log(`list_posts ${JSON.stringify(posts.structuredContent)}`);
} finally {
  await client.close();
}
