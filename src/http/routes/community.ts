/**
 * Community pages (INTERFACE section 1): public profiles, posts, writing, liking and commenting,
 * editing, publishing and deleting one's own posts, and avatars. `/u/{username}`, `/posts/{id}` and `/avatars/{id}` are the API's `profileUrl`,
 * `url` and `avatarUrl`, so they resolve for every active user and published post.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findAccount } from '../../core/accounts/accounts.js';
import { defaultAvatarSvg } from '../../core/community/avatars.js';
import { InputError, OAuthError } from '../../core/errors.js';
import type { User } from '../../core/accounts/ports.js';
import type { Post } from '../../core/community/ports.js';
import {
  BODY_MAX_LENGTH, CATEGORY_MAX_LENGTH, TITLE_MAX_LENGTH, checkedStatus, commentOnPost, deletePost, editPost, publishPost, writePost,
} from '../../core/community/posts.js';
import { firstCharacters } from '../../core/text.js';
import { clientAddress } from '../client-address.js';
import { requireSignIn, requireUser, sendPage } from '../pages.js';
import { NOTHING_HERE, noSuchPage } from '../plugins/errors.js';
import { idParams, isRowId } from '../row-id.js';
import { currentSignIn, pageContext, verifyCsrf, verifyCsrfBeforeBody } from '../plugins/session.js';
import { deletePostPage, newPostPage, postPage, profilePage } from '../views/community.js';
import { TYPED_FIELD } from '../typed-field.js';

const page = { config: { html: true } };

function notFound(): OAuthError {
  return new OAuthError('not_found', 'There is nothing at this address.', { words: NOTHING_HERE });
}

/**
 * The body a post's form may send: its text may be BODY_MAX_LENGTH UTF-16 units, as the textarea's
 * maxlength counts them, and a browser sends each percent-encoded, up to 9 bytes a unit (a Han
 * character is 3 bytes of UTF-8, each `%XX`), with room for the other fields. Under the site's
 * 64 KiB a Chinese post of 7,300 characters was a generic 413 page, its text lost (attack111).
 */
export const POST_FORM_BODY_LIMIT_BYTES = BODY_MAX_LENGTH * 9 + 16 * 1024;

/** What a post's form may send, each field a string: its rules (lengths, the status's two values) are the core's, so its messages are the ones people see. */
const postFormBody = { type: 'object', properties: { title: TYPED_FIELD, category: TYPED_FIELD, body: TYPED_FIELD, status: TYPED_FIELD, _csrf: TYPED_FIELD } } as const;

interface PostFormBody {
  title?: string;
  category?: string;
  body?: string;
  status?: string;
}

/** The form's fields as a refused one shows them again. */
interface PostFormFields {
  title: string;
  category: string;
  body: string;
}

/**
 * What a refused form shows again: the title and category trimmed and cut to the most either may
 * hold, whole characters only (a valid one is never cut), as sign-up echoes a username. A script's
 * 60 KB title was written back into the page whole; a browser's field never sends more (`maxlength`).
 */
function echoed(form: PostFormFields): PostFormFields {
  return {
    title: firstCharacters(form.title.trim(), TITLE_MAX_LENGTH),
    category: firstCharacters(form.category.trim(), CATEGORY_MAX_LENGTH),
    body: form.body,
  };
}

/**
 * A post's form is read before its handler runs, up to POST_FORM_BODY_LIMIT_BYTES: a POST from a
 * browser nobody is signed in on is answered first, before its body is read, as the handler would
 * answer it: the form's 403 when it cannot pass the CSRF check (another origin, no CSRF cookie),
 * else to sign in and back to the form's page (`back`). An id that names no post is the 404 its
 * params' schema would give after the body (`isRowId`). A session live here is looked up again once
 * the body has come (attack124): the body may take up to the request timeout to arrive, and a
 * session ended meanwhile (the member suspended, signed out everywhere) must write nothing.
 */
function signedOutBeforeBody(back: (request: FastifyRequest) => string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const { id } = request.params as { id?: string };
    if (id !== undefined && !isRowId(id)) throw noSuchPage();
    if (await currentSignIn(request)) {
      request.signIn = undefined; // not kept: the handler reads the session as it is after the body
      return undefined;
    }
    verifyCsrfBeforeBody(request);
    await requireSignIn(request, reply, back(request));
    return reply;
  };
}

export async function communityRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock, views } = app.deps;

  /** A post the viewer may see: published, or a draft of their own. Anything else is 404. */
  async function visiblePost(request: FastifyRequest, id: number): Promise<Post> {
    const post = await stores.posts.findById(id);
    if (!post) throw notFound();
    if (post.status === 'draft' && (await currentSignIn(request))?.user.id !== post.authorId) throw notFound();
    return post;
  }

  /**
   * A post of the signed-in member's own, for the author's pages and forms. Another's post,
   * published or draft, is the same 404 as an unknown one, so nothing tells whether a draft exists.
   */
  async function ownPost(user: User, id: number): Promise<Post> {
    const post = await stores.posts.findById(id);
    if (!post || post.authorId !== user.id) throw notFound();
    return post;
  }

  /**
   * What a like or a comment needs: the form's CSRF check, a signed-in member (else a redirect to
   * sign in, and `undefined`) and a published post (drafts take neither).
   */
  async function memberOnPublishedPost(request: FastifyRequest<{ Params: { id: number } }>, reply: FastifyReply) {
    verifyCsrf(request);
    const back = `/posts/${request.params.id}`;
    const user = await requireUser(request, reply, back);
    if (!user) return undefined;
    const post = await visiblePost(request, request.params.id);
    if (post.status !== 'published') throw notFound();
    return { user, post, back };
  }

  app.get('/u/:username', { ...page, schema: { params: { type: 'object', properties: { username: { type: 'string', maxLength: 64 } } } } },
    async (request: FastifyRequest<{ Params: { username: string } }>, reply) => {
      const user = await findAccount(stores, request.params.username);
      if (!user || user.status !== 'active') throw notFound();
      const viewer = (await currentSignIn(request))?.user;
      const [{ items }, drafts] = await Promise.all([
        stores.posts.listPublishedByAuthor(user.id, 0, 50),
        viewer?.id === user.id ? stores.posts.listDraftsByAuthor(user.id) : Promise.resolve([]),
      ]);
      return sendPage(reply, profilePage(await pageContext(request, reply), user, items, drafts));
    });

  // `avatarUrl` of the API is the bare address, cached 5 minutes. The pages add `?v=` the user's
  // last change (`avatarSrc`), which a new avatar moves: that address is cached for good, and a
  // page shows the new image at once. A `v` that is not the current version is cached briefly only.
  app.get('/avatars/:id', {
    schema: { params: idParams, querystring: { type: 'object', properties: { v: { type: 'string', maxLength: 20 } } } },
  }, async (request: FastifyRequest<{ Params: { id: number }; Querystring: { v?: string } }>, reply) => {
    const user = await stores.users.findById(request.params.id);
    // A member who is not active shows nothing, as their profile and posts do (docs/site.md).
    if (!user || user.status !== 'active') throw notFound();
    const current = request.query.v === String(user.updatedAt);
    reply.header('x-content-type-options', 'nosniff').header('cache-control', current ? 'public, max-age=31536000, immutable' : 'public, max-age=300')
      .header('content-security-policy', "default-src 'none'; sandbox");
    const avatar = await stores.users.findAvatar(user.id);
    if (avatar) return reply.type(avatar.contentType).send(Buffer.from(avatar.image));
    return reply.type('image/svg+xml').send(defaultAvatarSvg(user));
  });

  app.get('/posts/new', page, async (request, reply) => {
    if (!(await requireUser(request, reply))) return reply;
    return sendPage(reply, newPostPage(await pageContext(request, reply), await stores.posts.listCategories(), { title: '', category: '', body: '' }));
  });

  app.post('/posts/new', {
    ...page,
    bodyLimit: POST_FORM_BODY_LIMIT_BYTES,
    onRequest: signedOutBeforeBody(() => '/posts/new'),
    schema: { body: postFormBody },
  }, async (request: FastifyRequest<{ Body: PostFormBody }>, reply) => {
    verifyCsrf(request);
    const user = await requireUser(request, reply, '/posts/new');
    if (!user) return reply;
    const form = { title: request.body.title ?? '', category: request.body.category ?? '', body: request.body.body ?? '' };
    try {
      // The buttons send `published` or `draft`; none sent (an older form, a script) publishes.
      const status = checkedStatus(request.body.status) ?? 'published';
      const post = await writePost(stores, clock, { authorId: user.id, ...form, status });
      return reply.redirect(`/posts/${post.id}`, 303);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      const categories = await stores.posts.listCategories();
      return sendPage(reply, newPostPage(await pageContext(request, reply), categories, { ...echoed(form), errors: error.problems }), 400);
    }
  });

  app.get('/posts/:id/edit', { ...page, schema: { params: idParams } }, async (request: FastifyRequest<{ Params: { id: number } }>, reply) => {
    const user = await requireUser(request, reply);
    if (!user) return reply;
    const post = await ownPost(user, request.params.id);
    const form = { title: post.title, category: post.categoryName, body: post.body };
    return sendPage(reply, newPostPage(await pageContext(request, reply), await stores.posts.listCategories(), form, post));
  });

  /** An edit makes the page's HTML and the API's excerpt again; "Publish" on a draft publishes it too. */
  app.post('/posts/:id/edit', {
    ...page,
    bodyLimit: POST_FORM_BODY_LIMIT_BYTES,
    onRequest: signedOutBeforeBody((request) => `/posts/${(request.params as { id: string }).id}/edit`),
    schema: { params: idParams, body: postFormBody },
  }, async (request: FastifyRequest<{ Params: { id: number }; Body: PostFormBody }>, reply) => {
    verifyCsrf(request);
    const user = await requireUser(request, reply, `/posts/${request.params.id}/edit`);
    if (!user) return reply;
    const post = await ownPost(user, request.params.id);
    const form = { title: request.body.title ?? '', category: request.body.category ?? '', body: request.body.body ?? '' };
    try {
      // `published` publishes a draft and keeps a published post published; `draft` (or none) keeps the post's status.
      const publish = checkedStatus(request.body.status) === 'published';
      const edited = await editPost(stores, clock, { postId: post.id, authorId: user.id, ...form, publish });
      if (!edited) throw notFound(); // deleted since it was read
      return reply.redirect(`/posts/${post.id}`, 303);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      const categories = await stores.posts.listCategories();
      return sendPage(reply, newPostPage(await pageContext(request, reply), categories, { ...echoed(form), errors: error.problems }, post), 400);
    }
  });

  app.post('/posts/:id/publish', { ...page, schema: { params: idParams } }, async (request: FastifyRequest<{ Params: { id: number } }>, reply) => {
    verifyCsrf(request);
    const back = `/posts/${request.params.id}`;
    const user = await requireUser(request, reply, back);
    if (!user) return reply;
    // Already published (a second press) is no error; another's post or none at all is 404.
    if (!(await publishPost(stores, clock, request.params.id, user.id))) await ownPost(user, request.params.id);
    return reply.redirect(back, 303);
  });

  /** Deleting asks first: this page, then its form's POST with `confirm=delete`. */
  app.get('/posts/:id/delete', { ...page, schema: { params: idParams } }, async (request: FastifyRequest<{ Params: { id: number } }>, reply) => {
    const user = await requireUser(request, reply);
    if (!user) return reply;
    return sendPage(reply, deletePostPage(await pageContext(request, reply), await ownPost(user, request.params.id)));
  });

  app.post('/posts/:id/delete', {
    ...page,
    schema: { params: idParams, body: { type: 'object', properties: { confirm: TYPED_FIELD, _csrf: TYPED_FIELD } } },
  }, async (request: FastifyRequest<{ Params: { id: number }; Body: { confirm?: string } }>, reply) => {
    verifyCsrf(request);
    const user = await requireUser(request, reply, `/posts/${request.params.id}/delete`);
    if (!user) return reply;
    if (request.body?.confirm !== 'delete') {
      // Not sent from the question: ask it, delete nothing.
      return sendPage(reply, deletePostPage(await pageContext(request, reply), await ownPost(user, request.params.id)));
    }
    if (!(await deletePost(stores, request.params.id, user.id))) throw notFound();
    return reply.redirect(`/u/${encodeURIComponent(user.username)}`, 303);
  });

  app.get('/posts/:id', { ...page, schema: { params: idParams } }, async (request: FastifyRequest<{ Params: { id: number } }>, reply) => {
    let post = await visiblePost(request, request.params.id);
    if (post.status === 'published') {
      // Counted in memory and added to the post within seconds (src/core/community/views.ts): a
      // GET writes nothing, and the page shows at once the views this instance has not written yet.
      views.count(post, { memberId: (await currentSignIn(request))?.user.id, address: clientAddress(request) }, clock.now());
      post = { ...post, viewCount: post.viewCount + views.unwritten(post.id) };
    }
    const comments = post.status === 'published' ? await stores.posts.listComments(post.id) : [];
    return sendPage(reply, postPage(await pageContext(request, reply), post, { comments }));
  });

  app.post('/posts/:id/like', { ...page, schema: { params: idParams } }, async (request: FastifyRequest<{ Params: { id: number } }>, reply) => {
    const target = await memberOnPublishedPost(request, reply);
    if (!target) return reply;
    await stores.posts.like(target.post.id, target.user.id, clock.now());
    return reply.redirect(target.back, 303);
  });

  app.post('/posts/:id/comments', {
    ...page,
    schema: { params: idParams, body: { type: 'object', properties: { comment: TYPED_FIELD, _csrf: TYPED_FIELD } } },
  }, async (request: FastifyRequest<{ Params: { id: number }; Body: { comment?: string } }>, reply) => {
    const target = await memberOnPublishedPost(request, reply);
    if (!target) return reply;
    const { user, post, back } = target;
    try {
      await commentOnPost(stores, clock, post.id, user.id, request.body.comment ?? '');
      return reply.redirect(`${back}#comments-heading`, 303);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      const comments = await stores.posts.listComments(post.id);
      return sendPage(reply, postPage(await pageContext(request, reply), post, {
        comments, error: error.problems, comment: request.body.comment ?? '',
      }), 400);
    }
  });
}
