/**
 * The resource API's tools for agents (INTERFACE section 13, the Model Context Protocol): what
 * each tool is, the scope it needs and what it answers. Each answers through the same functions as
 * the API's routes, so `get_profile` is exactly `/me` and `list_posts` exactly `/me/posts`. The
 * protocol (JSON-RPC, the lifecycle, Streamable HTTP) is the SDK's, in src/http/routes/mcp.ts.
 */
import type { Bearer } from './bearer.js';
import { type PostPage, type Profile, parsePaging, profileOf, readPosts } from './views.js';
import type { Stores } from '../stores.js';
import type { Scope } from '../oauth/scopes.js';
import type { SiteUrls } from '../urls.js';

/** The MCP protocol revisions the server speaks (INTERFACE section 13), the latest first. */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18'] as const;

export interface McpToolContext {
  stores: Stores;
  urls: SiteUrls;
  bearer: Bearer;
}

export interface McpTool {
  title: string;
  description: string;
  /** The scope a token needs to call the tool (INTERFACE section 13: 403 `insufficient_scope` without it). */
  scope: Scope;
  /** The tool's answer from its arguments; an `OAuthError` (`invalid_request`) for arguments the API would refuse. */
  call(context: McpToolContext, args: Record<string, unknown>): Promise<Profile | PostPage>;
}

/**
 * An argument as `parsePaging` reads a query parameter: a JSON number in its digits (`2`, and
 * `2.5` or `-1` as such, which it refuses), a string as it is, anything else as its JSON text,
 * which it refuses, so each argument is valid exactly when the same value in the query would be.
 * A value nested deeper than `JSON.stringify` can recurse (the 64 KiB body holds 30,000 levels)
 * is refused as well, under a short text of its own, rather than failing the call with a 500.
 */
function asParameter(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return '[nested too deep]';
  }
}

export const MCP_TOOLS = {
  get_profile: {
    title: 'Get my profile',
    description: "The signed-in user's profile, exactly as GET /api/open/v1/me answers it: id, display name, avatar, bio, membership, level, experience points, profile page and creation time. Needs the scope profile:read.",
    scope: 'profile:read',
    call: async ({ urls, bearer }) => profileOf(bearer.user, urls),
  },
  list_posts: {
    title: 'List my posts',
    description: "One page of the signed-in user's published posts, newest first, exactly as GET /api/open/v1/me/posts answers it: items (title, excerpt, link, category, counts), page, size, totalElements, totalPages. Needs the scope posts:read.",
    scope: 'posts:read',
    call: async ({ stores, urls, bearer }, args) =>
      readPosts(stores, bearer.user.id, parsePaging({ page: asParameter(args.page), size: asParameter(args.size) }), urls),
  },
} as const satisfies Record<string, McpTool>;

export type McpToolName = keyof typeof MCP_TOOLS;

/** The tool called `name`, if there is one. */
export function mcpTool(name: unknown): McpTool | undefined {
  return typeof name === 'string' && Object.hasOwn(MCP_TOOLS, name) ? MCP_TOOLS[name as McpToolName] : undefined;
}
