import { DEFAULT_PERSONAL_TOKEN_DAYS, createPersonalToken } from '../../core/personal-tokens.js';
import { writePost } from '../../core/posts.js';
import { formatUtc } from '../../core/time.js';
import { siteUrls } from '../../core/urls.js';
import { UsageError, defineCommand, optionalCount, optionalString, requiredString } from '../command.js';
import { findUser } from './lookup.js';

export const postCreate = defineCommand({
  name: 'post create',
  usage: 'post create --username U --title T --category C --body B [--draft] [--likes N] [--comments N] [--views N]',
  options: {
    username: { type: 'string' }, title: { type: 'string' }, category: { type: 'string' }, body: { type: 'string' },
    draft: { type: 'boolean' }, likes: { type: 'string' }, comments: { type: 'string' }, views: { type: 'string' },
  },
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
    const views = optionalCount(values, 'views');
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
  usage: 'token create --username U --name LABEL --scopes "profile:read posts:read" [--expires-in-days 7|30|90|365|none]',
  options: {
    username: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'expires-in-days': { type: 'string' },
  },
  async run(deps, values) {
    const user = await findUser(deps, requiredString(values, 'username'));
    const rawDays = optionalString(values, 'expires-in-days');
    const expiresInDays = rawDays === undefined ? DEFAULT_PERSONAL_TOKEN_DAYS
      : rawDays === 'none' ? null
      : optionalCount(values, 'expires-in-days')!;
    const scopes = requiredString(values, 'scopes').split(/\s+/).filter((s) => s !== '');
    if (scopes.length === 0) throw new UsageError('--scopes is required');
    const { token, record } = await createPersonalToken(deps.stores, deps.clock, {
      userId: user.id, name: requiredString(values, 'name'), scopes, expiresInDays,
    });
    deps.metrics.tokensIssued.inc({ kind: 'personal' });
    return { token, expires_at: record.expiresAt === null ? null : formatUtc(record.expiresAt) };
  },
  human: (r) => `${r.token}\n(shown once; expires ${r.expires_at ?? 'never'})`,
});
