import { DEFAULT_PERSONAL_TOKEN_DAYS, personalTokenStatus } from '../../core/credentials/personal-tokens.js';
import { createMemberToken } from '../../core/staff/console.js';
import { writePost } from '../../core/community/posts.js';
import { type Instant, formatUtc } from '../../core/time.js';
import { siteUrls } from '../../core/urls.js';
import { COUNTER_MAX, UsageError, defineCommand, optionalCount, optionalString, requiredString } from '../command.js';
import { withNotices } from '../owner-notices.js';
import { findUser } from './lookup.js';
import { REASON_OPTION } from './staff.js';

export const postCreate = defineCommand({
  name: 'post create',
  summary: 'write a post for an account',
  description: 'Writes a post for an account (Markdown body), published unless --draft.',
  usage: '--username U --title T --category C --body B [--draft] [--likes N] [--comments N] [--views N]',
  options: {
    username: { type: 'string' }, title: { type: 'string' }, category: { type: 'string' }, body: { type: 'string' },
    draft: { type: 'boolean' }, likes: { type: 'string' }, comments: { type: 'string' }, views: { type: 'string' },
  },
  help: {
    username: 'the author', title: 'the title', category: 'the category\'s name (made when new)', body: 'the text, in Markdown',
    draft: 'keep it as a draft (not public, not in the API)', likes: 'its like count', comments: 'its comment count', views: 'its view count',
  },
  prints: '{"id","url"}',
  async run(deps, values) {
    const author = await findUser(deps, requiredString(values, 'username'));
    const draft: Parameters<typeof writePost>[2] = {
      authorId: author.id,
      title: requiredString(values, 'title'),
      category: requiredString(values, 'category'),
      body: requiredString(values, 'body'),
      status: values.draft === true ? 'draft' : 'published',
    };
    const likes = optionalCount(values, 'likes');
    const comments = optionalCount(values, 'comments');
    const views = optionalCount(values, 'views', COUNTER_MAX);
    if (likes !== undefined) draft.likeCount = likes;
    if (comments !== undefined) draft.commentCount = comments;
    if (views !== undefined) draft.viewCount = views;
    const post = await writePost(deps.stores, deps.clock, draft);
    return { id: post.id, url: siteUrls(deps.settings.baseUrl).post(post.id) };
  },
  human: (r) => `created post ${r.id}: ${r.url}`,
});

export const tokenCreate = defineCommand({
  name: 'token create',
  summary: 'create a personal API token for an account',
  description: 'Creates a personal API token for an account, printed once; only its hash is kept. '
    + 'Written to the staff log, and to the account\'s security log as from the site\'s staff, with the notice mail the member\'s own token sends.',
  usage: `--username U --name LABEL --scopes "profile:read posts:read" [--expires-in-days 7|30|90|365|none] ${REASON_OPTION.usage}`,
  options: {
    username: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'expires-in-days': { type: 'string' }, ...REASON_OPTION.options,
  },
  help: {
    username: 'the account the token acts for', name: 'a label the user sees in their settings',
    scopes: 'profile:read, posts:read or both, separated by spaces', 'expires-in-days': `its lifetime (default ${DEFAULT_PERSONAL_TOKEN_DAYS}); none: no expiry`,
    ...REASON_OPTION.help,
  },
  prints: '{"token","expires_at"}: expires_at in ISO-8601 UTC, or null',
  async run(deps, values, io) {
    const user = await findUser(deps, requiredString(values, 'username'));
    const rawDays = optionalString(values, 'expires-in-days');
    const expiresInDays = rawDays === undefined ? DEFAULT_PERSONAL_TOKEN_DAYS
      : rawDays === 'none' ? null
      : optionalCount(values, 'expires-in-days')!;
    const scopes = requiredString(values, 'scopes').split(/\s+/).filter((s) => s !== '');
    if (scopes.length === 0) throw new UsageError('--scopes is required');
    const reason = REASON_OPTION.read(values);
    // Loaded already by the command line before any command runs (src/cli/main.ts).
    const { readSharedKeysInStartTurn } = await import('../../base-deps.js');
    await readSharedKeysInStartTurn(deps);
    // The token, the member's security-log line and the staff-log entry land in one transaction.
    const made = await createMemberToken(withNotices(deps), { via: 'cli' },
      { userId: user.id, name: requiredString(values, 'name'), scopes, expiresInDays }, reason);
    if (!made) throw new UsageError(`unknown user "${user.username}"`);
    const { token, record } = made;
    const expiresAt = record.expiresAt === null ? null : formatUtc(record.expiresAt);
    deps.audit.record({ audit: 'personal_token.created', userId: user.id, tokenId: record.id, scope: record.scope, expiresAt, via: 'cli' });
    // The member's notice mail once the token is printed: its failure must not lose the token.
    io.afterAnswer('the member\'s notice mail could not be queued', made.announce);
    return { token, expires_at: expiresAt };
  },
  human: (r) => `${r.token}\n(shown once; expires ${r.expires_at ?? 'never'})`,
});

const utcOrNull = (instant: Instant | null) => (instant === null ? null : formatUtc(instant));

export const tokenList = defineCommand({
  name: 'token list',
  summary: 'list an account\'s personal API tokens',
  description: 'Lists an account\'s personal API tokens, newest first, without the tokens themselves (revoked and expired ones stay listed until the janitor removes them). Apps the user authorized are at /settings/applications.',
  usage: '--username U',
  options: { username: { type: 'string' } },
  help: { username: 'the account' },
  prints: '{"tokens":[{"id","name","scope","status","created_at","expires_at","last_used_at"}]}: status active, expired or revoked; times in ISO-8601 UTC or null',
  async run(deps, values) {
    const user = await findUser(deps, requiredString(values, 'username'));
    const now = deps.clock.now();
    const tokens = await deps.stores.personalTokens.listForUser(user.id);
    return {
      tokens: tokens.map((t) => ({
        id: t.id, name: t.name, scope: t.scope, status: personalTokenStatus(t, now),
        created_at: formatUtc(t.createdAt), expires_at: utcOrNull(t.expiresAt), last_used_at: utcOrNull(t.lastUsedAt),
      })),
    };
  },
  human: (r) => (r.tokens.length === 0 ? 'no personal tokens' : r.tokens.map((t) =>
    `${String(t.id).padStart(6)}  ${t.status.padEnd(7)}  ${t.name}  (${t.scope}; expires ${t.expires_at ?? 'never'})`).join('\n')),
});

export const tokenRevoke = defineCommand({
  name: 'token revoke',
  summary: 'revoke one of an account\'s personal API tokens',
  description: 'Revokes one of an account\'s personal API tokens (by the id token list prints); it stops working at once.',
  usage: '--username U --id N',
  options: { username: { type: 'string' }, id: { type: 'string' } },
  help: { username: 'the account the token belongs to', id: 'the token\'s id' },
  prints: '{"id","status"}',
  async run(deps, values) {
    const user = await findUser(deps, requiredString(values, 'username'));
    const id = optionalCount(values, 'id');
    if (id === undefined) throw new UsageError('--id is required');
    if (id > 2 ** 31 - 1 || !(await deps.stores.personalTokens.revoke(id, user.id, deps.clock.now()))) {
      throw new UsageError(`${user.username} has no live personal token with id ${id}`);
    }
    deps.audit.record({ audit: 'personal_token.revoked', userId: user.id, tokenId: id, via: 'cli' });
    return { id, status: 'revoked' as const };
  },
  human: (r) => `personal token ${r.id} is revoked`,
});
