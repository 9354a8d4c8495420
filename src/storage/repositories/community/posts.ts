import { type Expression, type Kysely, PostgresAdapter, type SelectQueryBuilder, sql } from 'kysely';
import { escapedText } from '../../../core/community/markdown.js';
import type { Category, Comment, KeysetCursor, NewPost, Post, PostEdit, PostStatus, PostStore, PostSummary } from '../../../core/community/ports.js';
import type { Page } from '../../../core/stores.js';
import type { Instant } from '../../../core/time.js';
import type { CompiledQueries } from '../../database.js';
import type { Database } from '../../schema.js';
import { isUniqueViolation } from '../errors.js';

/**
 * The condition on the author's row (`users`) of what the site shows, posts and comments alike:
 * only what a member whose account is active wrote. Any other status is unusable (INTERFACE
 * section 4), and staff suspend a member to stop what they wrote reaching people; nothing is
 * deleted, so it all shows again once they are active. Part of the statement that reads, so no
 * second read can disagree with it; a literal, so the compiled queries' parameters stay as they were.
 */
const byActiveAuthor = sql<boolean>`users.status = 'active'`;

/** Rows after `after` in the order (`time`, `id`), by a row-value comparison both databases read off an index; every row without it. */
function afterRow(time: string, id: string, after: KeysetCursor | undefined): Expression<boolean> {
  return after === undefined ? sql<boolean>`true` : sql<boolean>`(${sql.ref(time)}, ${sql.ref(id)}) > (${after.createdAt}, ${after.id})`;
}

/**
 * The members whose posts' `author_hidden` flags disagree with their status, whom a pass of
 * `syncHiddenFlags` has work for: made active with posts still flagged, or not active with posts
 * not all flagged. The very condition of the partial index `users_post_flags_due` (migration
 * 2026-11-29-0010), so both databases read it from that index, which holds next to no one once the
 * passes have caught up.
 */
const flagsDue = sql<boolean>`((users.status = 'active' and users.posts_flagged <> 'none') or (users.status <> 'active' and users.posts_flagged <> 'all'))`;

/** The first key of the PostgreSQL advisory lock a pass holds on a member (the second is the member's id). */
const HIDDEN_FLAGS_LOCK = 7305;
/** Members one pass of `syncHiddenFlags` looks at, each in its own transaction. */
const MEMBERS_PER_PASS = 16;

/**
 * Posts with their author's name and their category's name, without the body: a list shows the
 * excerpt made when the post was written, so a page of posts never reads 20,000-character bodies.
 */
function selectPosts(db: Kysely<Database>) {
  return db.selectFrom('posts')
    .innerJoin('categories', 'categories.id', 'posts.category_id')
    .innerJoin('users', 'users.id', 'posts.author_id')
    .select([
      'posts.id', 'posts.author_id', 'users.username', 'users.nickname', 'posts.category_id', 'categories.name as category_name',
      'posts.title', 'posts.excerpt', 'posts.status', 'posts.like_count', 'posts.comment_count',
      'posts.view_count', 'posts.created_at', 'posts.updated_at',
    ]);
}

/**
 * The home page's `limit` newest posts (`listRecentPublished`): two runs of
 * posts, newest first, in one statement. The published posts no pass has flagged, from
 * `posts_recent_shown`, which holds no flagged post, so a hidden member's posts that a pass has
 * flagged are never walked (each cost 0.15 µs; docs/performance.md, decision 57); and the flagged
 * posts of members made active again whose flags no pass has cleared yet, the members found first
 * through `users_post_flags_due` (`in`, so neither planner walks posts to find them), their posts
 * through `posts_author_flag`. `byActiveAuthor` stays the rule in both: the flag only says where to
 * look, so a post of a member suspended a moment ago, not yet flagged, is left out by the join as
 * before (and walked, until a pass flags it). The literals match the partial indexes' conditions.
 * The limit is a literal too, so the statement has no parameter and PostgreSQL plans it once per
 * connection: with the limit as a parameter it kept planning each read afresh (a custom plan), about
 * 1 ms for this union once `posts` held 70,000 rows, where running it takes 0.1 ms.
 */
export function recentPublished(db: Kysely<Database>, limit: number) {
  const most = sql.lit(limit);
  const published = sql<'published'>`'published'`;
  const shown = db.selectFrom(selectPosts(db)
    .where('posts.status', '=', published).where('posts.author_hidden', '=', sql<number>`0`).where(byActiveAuthor)
    .orderBy('posts.created_at', 'desc').orderBy('posts.id', 'desc').limit(most).as('shown')).selectAll();
  const stillFlagged = db.selectFrom(selectPosts(db)
    .where('posts.author_id', 'in', (eb) => eb.selectFrom('users').select('users.id').where(flagsDue).where(byActiveAuthor))
    .where('posts.author_hidden', '=', sql<number>`1`).where('posts.status', '=', published).where(byActiveAuthor)
    .where('posts.created_at', '>=', sql<number>`coalesce((select p.created_at from posts p where p.author_id = users.id and p.author_hidden = 1
      and p.status = 'published' order by p.created_at desc, p.id desc limit 1 offset ${sql.lit(Math.max(0, limit - 1))}), -1)`)
    .orderBy('posts.created_at', 'desc').orderBy('posts.id', 'desc').limit(most).as('flagged')).selectAll();
  return shown.unionAll(stillFlagged).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(most);
}

/**
 * One page of an author's published posts, newest first, ties by id (INTERFACE section 7), read
 * from the covering index `posts_published_page` (migration 2026-11-23-0070), which holds every
 * column shown, so no post row (with its body and HTML) is read. The API pages by number, so a
 * page is found by skipping entries, from the nearer end of the author's posts: the total kept
 * with the user (`publishedCountByAuthor`) says which. A page within `SKIPPED_IN_PAGE_INDEX`
 * entries of its end is read from that end of the covering index with OFFSET (from the oldest in
 * ascending order, turned round by the caller), which skips no more than the page itself reads.
 * A deeper page finds its first post by skipping entries of the narrow index `posts_by_author`
 * (four integers an entry; `status` is a parameter there, which keeps both planners on that
 * index), then reads the page by key from it: that subquery cost 9 µs on SQLite, where OFFSET
 * through the covering index costs 0.04 µs an entry skipped (docs/performance.md, decision 35).
 * Skipping thousands through the covering index, or joining every skipped entry, made page 500 of
 * 500 twice as slow. `status` is a literal in the outer query, so both databases can prove the
 * covering index's `status = 'published'` applies. The author and the status are the caller's,
 * not selected: every column selected is a property of each row better-sqlite3 hands over.
 */
function publishedPageByAuthor(db: Kysely<Database>, read: PageRead) {
  return db.selectFrom('posts')
    .select([
      'posts.id', 'posts.category_id', 'posts.title', 'posts.excerpt',
      'posts.like_count', 'posts.comment_count', 'posts.view_count', 'posts.created_at', 'posts.updated_at',
    ])
    .where('posts.author_id', '=', read.author()).where('posts.status', '=', sql<'published'>`'published'`);
}

/**
 * Where a page's statement takes the values of its read: its own parameters (`asParameters`, one
 * statement a read), or, for PostgreSQL's pages read together (`CompiledQueries.readTogether`),
 * the read's element of the statement's JSON parameter, `k.read`: `[author, offset, size,
 * status]` (`asReadElement`). Built with the parameters, a page's statement is the one it was
 * before pages were read together, parameter for parameter.
 */
interface PageRead {
  author(): Expression<number>;
  /** The status a skip reads: a value, never a literal (`publishedPageByAuthor`). */
  status(): Expression<string>;
  /** The page's offset as OFFSET takes it; `offsetBigint` beside the author's total. */
  offset(): Expression<number>;
  offsetBigint(): Expression<number>;
  size(): Expression<number>;
  /** The 1 of a skip's `limit 1`: a parameter in a read's own statement, as Kysely made it. */
  one(): Expression<number>;
}

const asParameters: PageRead = {
  author: () => sql<number>`${0}`,
  status: () => sql<string>`${'published'}`,
  offset: () => sql<number>`${0}`,
  offsetBigint: () => offsetParameter(),
  size: () => sql<number>`${0}`,
  one: () => sql<number>`${1}`,
};

/** The page's author is the author's row joined to the read (`withAuthor`). */
const asReadElement: PageRead = {
  author: () => sql.ref<number>('users.id'),
  status: () => sql<string>`k.read->>3`,
  offset: () => sql<number>`cast(k.read->>1 as bigint)`,
  offsetBigint: () => sql<number>`cast(k.read->>1 as bigint)`,
  size: () => sql<number>`cast(k.read->>2 as integer)`,
  one: () => sql<number>`1`,
};

const pageFromEnd = (order: 'desc' | 'asc') => (db: Kysely<Database>, read: PageRead = asParameters) =>
  publishedPageByAuthor(db, read).orderBy('posts.created_at', order).orderBy('posts.id', order).limit(read.size()).offset(read.offset());

/**
 * The page whose first post is `skipped` entries from one end (by default the read's offset),
 * found on the narrow index; `wanted`, a condition on the author's row that the skip and the page
 * are read under (`withAuthor`). Put in the skip's own subquery too: with only the author as its
 * parameter, PostgreSQL ran a skip (of 9,980 entries for page 499 of 500) even under a half of a
 * union whose condition failed.
 */
const pageAfterSkipping = (skipFrom: 'desc' | 'asc', skipped?: (read: PageRead) => Expression<number>, wanted?: (read: PageRead) => Expression<boolean>) =>
  (db: Kysely<Database>, read: PageRead = asParameters) => {
    const skip = db.selectFrom('posts').select(['created_at', 'id'])
      .where('author_id', '=', read.author()).where('status', '=', read.status());
    const first = (wanted ? skip.where(wanted(read)) : skip)
      .orderBy('created_at', skipFrom).orderBy('id', skipFrom).limit(read.one()).offset(skipped ? skipped(read) : read.offset());
    // Past the last page the subquery finds no row, the comparison is NULL and the page empty.
    const page = publishedPageByAuthor(db, read).where(sql<boolean>`(posts.created_at, posts.id) <= (${first})`);
    return (wanted ? page.where(wanted(read)) : page).orderBy('posts.created_at', 'desc').orderBy('posts.id', 'desc').limit(read.size());
  };

/** Entries a page may skip with OFFSET in the covering index (measured crossover: about 480). */
const SKIPPED_IN_PAGE_INDEX = 200;

/** Each built once: `CompiledQueries` keeps a compiled query per builder. */
const pages = {
  fromNewest: pageFromEnd('desc'),
  fromOldest: pageFromEnd('asc'),
  skippingFromNewest: pageAfterSkipping('desc'),
  skippingFromOldest: pageAfterSkipping('asc'),
};

/**
 * SQLite: the query that reads the page of `limit` posts `offset` from the newest, with its
 * parameters; `reversed`: its rows come oldest first. `total`, the author's published posts, is
 * known for any page but the first, which starts at the newest post whatever it is (exported for
 * bench/posts-pieces.ts).
 */
export function pageQuery(authorId: number, offset: number, limit: number, total: number | undefined) {
  // The page's first post, counted from the oldest.
  const fromOldest = total === undefined ? offset : total - 1 - offset;
  if (fromOldest >= offset) {
    return offset <= SKIPPED_IN_PAGE_INDEX
      ? { build: pages.fromNewest, parameters: [authorId, limit, offset], reversed: false }
      : { build: pages.skippingFromNewest, parameters: [authorId, authorId, 'published', 1, offset, limit], reversed: false };
  }
  // The posts older than the page's last one.
  const older = Math.max(0, fromOldest + 1 - limit);
  return older <= SKIPPED_IN_PAGE_INDEX
    ? { build: pages.fromOldest, parameters: [authorId, fromOldest + 1 - older, older], reversed: true }
    : { build: pages.skippingFromOldest, parameters: [authorId, authorId, 'published', 1, fromOldest, limit], reversed: false };
}

/** The author's published posts, as the author's row in the statement says. */
const authorsTotal = sql.ref<number>('users.published_posts');

/**
 * The page's offset, a parameter, as a `bigint`: beside the total, an `integer`, PostgreSQL would
 * take it for one, and the API's pages reach offsets of 5 × 10¹⁰ (`MAX_PAGING_VALUE` × 50).
 */
const offsetParameter = () => sql<number>`cast(${0} as bigint)`;

/** Any query of a page, whatever it selects from: `withAuthor` says its row (`$castTo`). */
type AnyPage = SelectQueryBuilder<any, any, object>;

/**
 * PostgreSQL: a page together with its author's total and names, in one statement (`one`), and
 * the pages of one turn that read the same way together (`many`). There each
 * statement is a round trip on one of the pool's connections: read apart, the count and the first
 * page held two connections at once per request, and a later page waited for the count to choose
 * its end (docs/performance.md, decision 47). Here the author's row is read once and the page read
 * under it, so the total, the choice of end and the page come from one snapshot.
 * The category names are found for the page's posts once it is read: joined inside the page, on
 * statistics that said every author had a handful of posts, PostgreSQL hashed all of a prolific
 * author's posts with their categories and sorted them for each page. The author stays a parameter
 * of the page for the same reason: read from the author's row, the planner guessed the average
 * author's ten posts and did the same for the 10,000-post author (9.7 ms against 0.3). An author
 * gives one row, its `posts` null when the page has none; no row means no such author.
 */
const withAuthor = (page: (db: Kysely<Database>, read: PageRead) => AnyPage) => ({
  one: (db: Kysely<Database>) => db.selectFrom('users')
    .select([...authorColumns, postsAsJson(db, page(db, asParameters))])
    .where(byActiveAuthor).where('users.id', '=', 0),
  /**
   * The same for the reads of one turn (`CompiledQueries.readTogether`), each read's author row
   * joined by its key, each row naming its read in `i`. The author row stands in for the author
   * parameter inside the page: the plan is still a walk of the covering index from the author's
   * newest entry that stops after the page, whatever the planner guesses of the author's posts
   * (checked with statistics taken before one author had 20,000; docs/performance.md, decision 51).
   */
  many: (db: Kysely<Database>) => db
    .selectFrom(sql<{ read: unknown; i: number }>`jsonb_array_elements(cast(${sql.val('[]')} as jsonb)) with ordinality`.as<'k'>(sql`k(read, i)`))
    .innerJoin('users', (join) => join.on('users.id', '=', sql<number>`cast(k.read->>0 as bigint)`))
    .select([sql<number>`cast(k.i as integer)`.as('i'), ...authorColumns, postsAsJson(db, page(db, asReadElement))])
    .where(byActiveAuthor).orderBy('k.i'),
});

/** What `withAuthor` selects of the author: the total and the names. */
const authorColumns = ['users.published_posts as n', 'users.username', 'users.nickname'] as const;

/**
 * A post of a page read by `withAuthor`, its columns in this order: the page comes as one JSON
 * array of these, which pg hands over with one `JSON.parse`, where a row a post cost pg a string
 * and a type conversion for every column (about 40 % less of our CPU a page; docs/performance.md, decision 52).
 */
type PostTuple = [
  id: number, categoryId: number, categoryName: string | null, title: string, excerpt: string | null,
  likeCount: number, commentCount: number, viewCount: number, createdAt: number, updatedAt: number,
];

/**
 * The page's posts with their category names as `PostTuple`s, newest first, null for none. Each
 * name is looked up by its key: joined, the planner hashed the whole categories table for a page
 * of 100 once members had made 20,000 categories (3-6 ms a page, found by an attack).
 */
const postsAsJson = (db: Kysely<Database>, page: AnyPage) => db
  .selectFrom(page.$castTo<PostRow>().as('p'))
  .select(sql<PostTuple[] | null>`json_agg(json_build_array(p.id, p.category_id, (select name from categories where categories.id = p.category_id), p.title, p.excerpt,
    p.like_count, p.comment_count, p.view_count, p.created_at, p.updated_at) order by p.created_at desc, p.id desc)`.as('posts'))
  .as('posts');

function rowOf(post: PostTuple): PostRow {
  return {
    id: post[0], category_id: post[1], category_name: post[2] ?? undefined, title: post[3], excerpt: post[4],
    like_count: post[5], comment_count: post[6], view_count: post[7], created_at: post[8], updated_at: post[9],
  };
}

/**
 * A later page, as `pageQuery` reads it, the end chosen in the statement: a union of the page read
 * from the newest end (by OFFSET in the covering index or by a skip, as the offset alone says) and
 * the page read by a skip from the oldest, each under a condition on the author's total that holds
 * for one of them. PostgreSQL makes each condition a one-time filter and never runs the other half.
 */
const laterPageWithAuthor = (fromNewest: 'byOffset' | 'bySkipping') => withAuthor((db, read) => {
  const nearNewest = (r: PageRead) => sql<boolean>`${authorsTotal} > 2 * ${r.offsetBigint()}`;
  const newest = fromNewest === 'byOffset'
    ? pageFromEnd('desc')(db, read).where(nearNewest(read))
    : pageAfterSkipping('desc', (r) => r.offset(), nearNewest)(db, read);
  // The page's first post is `total - 1 - offset` entries from the oldest; past the end none is.
  const oldest = pageAfterSkipping('asc', (r) => sql<number>`greatest(${authorsTotal} - 1 - ${r.offsetBigint()}, 0)`,
    (r) => sql<boolean>`${authorsTotal} <= 2 * ${r.offsetBigint()} and ${authorsTotal} > ${r.offsetBigint()}`)(db, read);
  return db.selectFrom(newest.as('newest')).selectAll().unionAll(db.selectFrom(oldest.as('oldest')).selectAll());
});

/** Each built once, as `pages`. */
const pagesWithAuthor = {
  first: withAuthor(pageFromEnd('desc')),
  laterByOffset: laterPageWithAuthor('byOffset'),
  laterBySkipping: laterPageWithAuthor('bySkipping'),
};

/**
 * What a page read on PostgreSQL reads (`pageWithAuthor`): `posts`, `users` and `categories`, the
 * tables whose changes the database announces (`PostgresChangeFeed`), so it is remembered until one
 * of them is written.
 */
const pageWithAuthorReads = Object.values(pagesWithAuthor).flatMap(({ one, many }) => [one, many]);

/** PostgreSQL: the statements that read the page of `limit` posts `offset` from the newest with its author's row, and a read's parameters for each. */
function pageWithAuthorQuery(authorId: number, offset: number, limit: number) {
  const together = [authorId, offset, limit, 'published'];
  if (offset === 0) return { build: pagesWithAuthor.first, read: { one: [authorId, limit, 0, authorId], many: together } };
  // The half from the oldest: the page's author, then the skip's author, status, condition, limit and offset; the page's condition and limit.
  const oldest = [authorId, authorId, 'published', offset, offset, 1, offset, offset, offset, limit];
  return offset <= SKIPPED_IN_PAGE_INDEX
    ? { build: pagesWithAuthor.laterByOffset, read: { one: [authorId, offset, limit, offset, ...oldest, authorId], many: together } }
    : { build: pagesWithAuthor.laterBySkipping, read: { one: [authorId, authorId, 'published', offset, 1, offset, offset, limit, ...oldest, authorId], many: together } };
}

/**
 * A category's name by its id, for a page read without the join (SQLite). A category is never
 * renamed or removed by the service, but the name is remembered as the bearer rows are (decision
 * 8), so any write to `categories`, by this process or another, has it read again.
 */
const categoryNameById = (db: Kysely<Database>) => db.selectFrom('categories').select('name').where('id', '=', 0);

/**
 * The author's published posts, counted by triggers as they change (migration 2026-11-23-0080),
 * not per page; and the author's names, read here once rather than joined to every post of the page.
 * No row for an author who is not active: the page is then empty.
 */
export const publishedCountByAuthor = (db: Kysely<Database>) => db.selectFrom('users')
  .select(['published_posts as n', 'username', 'nickname'])
  .where(byActiveAuthor).where('id', '=', 0);

/**
 * What a page read on SQLite reads (`pageReadApart`): remembered with it until a post, a user or
 * a category is written (`CompiledQueries.rememberedAnswer`; docs/performance.md, decision 54).
 */
const pageReads = [publishedCountByAuthor, ...Object.values(pages), categoryNameById];

export class KyselyPostStore implements PostStore {
  private readonly postgres: boolean;
  /** `recentPublished` by limit (the home page's one), so each is compiled once. */
  private readonly recentPublished = new Map<number, (db: Kysely<Database>) => ReturnType<typeof recentPublished>>();

  constructor(private readonly db: Kysely<Database>, private readonly queries: CompiledQueries) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  private selectPosts() {
    return selectPosts(this.db);
  }

  async ensureCategory(name: string): Promise<Category> {
    const key = name.trim().toLowerCase();
    const existing = await this.db.selectFrom('categories').select(['id', 'name']).where('name_key', '=', key).executeTakeFirst();
    if (existing) return existing;
    try {
      return await this.db.insertInto('categories').values({ name: name.trim(), name_key: key })
        .returning(['id', 'name']).executeTakeFirstOrThrow();
    } catch (error) {
      // Another writer created it between our read and write: theirs is the one.
      if (!isUniqueViolation(error)) throw error;
      return this.db.selectFrom('categories').select(['id', 'name']).where('name_key', '=', key).executeTakeFirstOrThrow();
    }
  }

  listCategories(): Promise<Category[]> {
    return this.db.selectFrom('categories').select(['id', 'name']).orderBy('name').execute();
  }

  async create(post: NewPost, now: Instant): Promise<Post> {
    const { id } = await this.db.insertInto('posts').values({
      author_id: post.authorId,
      category_id: post.categoryId,
      title: post.title,
      body: post.body,
      excerpt: post.excerpt,
      body_html: post.bodyHtml,
      status: post.status,
      like_count: post.likeCount ?? 0,
      comment_count: post.commentCount ?? 0,
      view_count: post.viewCount ?? 0,
      created_at: now,
      updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    // Whatever the author's status: the CLI writes posts for any account.
    return (await this.post(id, { shown: false }))!;
  }

  findById(id: number): Promise<Post | undefined> {
    return this.post(id, { shown: true });
  }

  /** Post `id`; with `shown`, only while its author is active (`byActiveAuthor`). */
  private async post(id: number, { shown }: { shown: boolean }): Promise<Post | undefined> {
    const query = this.selectPosts().select(['posts.body', 'posts.body_html']).where('posts.id', '=', id);
    const row = await (shown ? query.where(byActiveAuthor) : query).executeTakeFirst();
    // Null only between a migration and its fill step: the body as escaped text meanwhile.
    return row && { ...toPostSummary(row), body: row.body, bodyHtml: row.body_html ?? escapedText(row.body) };
  }

  async listPublishedByAuthor(authorId: number, offset: number, limit: number): Promise<Page<PostSummary>> {
    const key = `${authorId} ${offset} ${limit}`;
    if (!this.queries.remembers) return this.queries.rememberedAnswer(this.db, pageWithAuthorReads, key, () => this.pageWithAuthor(authorId, offset, limit));
    return this.queries.rememberedAnswer(this.db, pageReads, key, () => this.pageReadApart(authorId, offset, limit));
  }

  /** SQLite: the author's row, the page and the category names, each remembered or read at once in this process. */
  private async pageReadApart(authorId: number, offset: number, limit: number): Promise<Page<PostSummary>> {
    const counted = this.queries.first(this.db, publishedCountByAuthor, [authorId]);
    // The first page starts at the newest post whatever the total, so it is read beside the count;
    // a later page waits for the total, which says which end its first post is nearer to.
    const total = offset === 0 ? undefined : Number((await counted)?.n ?? 0);
    if (total !== undefined && offset >= total) return { items: [], total };
    const page = pageQuery(authorId, offset, limit, total);
    const [rows, count] = await Promise.all([this.queries.rowViews(this.db, page.build, page.parameters), counted]);
    // No author row: the account is gone (its posts with it) or not active (`byActiveAuthor`).
    if (count === undefined) return { items: [], total: 0 };
    const names = await this.queries.firstOfEachRemembered(this.db, categoryNameById, rows.map((row) => row.category_id));
    const items = rows.map((row, i) => toPostOf(row, authorId, 'published', count, names[i]?.name));
    return { items: page.reversed ? items.reverse() : items, total: Number(count.n) };
  }

  /**
   * PostgreSQL: the page with its author's row and category names (`withAuthor`), in one
   * statement with the other pages of its turn that read the same way.
   */
  private async pageWithAuthor(authorId: number, offset: number, limit: number): Promise<Page<PostSummary>> {
    const page = pageWithAuthorQuery(authorId, offset, limit);
    const [author] = await this.queries.readTogether(this.db, page.build, page.read);
    // No author row: the account is gone (its posts with it) or not active (`byActiveAuthor`).
    if (author === undefined) return { items: [], total: 0 };
    const items = (author.posts ?? []).map((post) => toPostOf(rowOf(post), authorId, 'published', author));
    return { items, total: Number(author.n) };
  }

  async listDraftsByAuthor(authorId: number): Promise<PostSummary[]> {
    const rows = await this.selectPosts()
      .where('posts.author_id', '=', authorId).where('posts.status', '=', 'draft')
      .orderBy('posts.created_at', 'desc').orderBy('posts.id', 'desc').execute();
    return rows.map(toPostSummary);
  }

  async listAllByAuthor(authorId: number, after: KeysetCursor | undefined, limit: number): Promise<Post[]> {
    const rows = await this.selectPosts().select(['posts.body', 'posts.body_html'])
      .where('posts.author_id', '=', authorId).where(afterRow('posts.created_at', 'posts.id', after))
      .orderBy('posts.created_at').orderBy('posts.id').limit(limit).execute();
    return rows.map((row) => ({ ...toPostSummary(row), body: row.body, bodyHtml: row.body_html ?? escapedText(row.body) }));
  }

  async listRecentPublished(limit: number): Promise<PostSummary[]> {
    let build = this.recentPublished.get(limit);
    if (build === undefined) this.recentPublished.set(limit, (build = (db) => recentPublished(db, limit)));
    const { rows } = await this.queries.execute(this.db, build, []);
    return rows.map(toPostSummary);
  }

  /**
   * One pass over the members whose posts' flags disagree with their status (`flagsDue`): for
   * each, in a transaction of its own, up to `batch` posts (all members' together), newest first,
   * are flagged (member not active) or cleared (member active). Returns how many posts it changed:
   * fewer than `batch` once there is nothing left to do.
   *
   * The rule that keeps the home page right whatever the timing: a post is flagged only in a
   * transaction that also leaves its author's `posts_flagged` other than `none`, and `none` is
   * written only by a statement that finds none of their posts flagged. A member's pass runs
   * alone: on PostgreSQL under an advisory lock on the member (another instance's pass skips them
   * until the next), on SQLite under the write lock every transaction takes at BEGIN. The status
   * is read, never written, and the member's row is written last, so a moderation action waits at
   * most for that one row's commit; a status changed meanwhile leaves the member due, and the next
   * pass goes the other way. Each pass starts from the rows as they are, so a crash or restart
   * loses nothing.
   */
  async syncHiddenFlags(batch: number): Promise<number> {
    const due = await this.db.selectFrom('users').select('users.id').where(flagsDue)
      .orderBy('users.id').limit(MEMBERS_PER_PASS).execute();
    let changed = 0;
    for (const { id } of due) {
      if (changed >= batch) break;
      changed += await this.queries.transaction(this.db, (trx) => this.syncMemberFlags(trx, id, batch - changed));
    }
    return changed;
  }

  private async syncMemberFlags(trx: Kysely<Database>, memberId: number, batch: number): Promise<number> {
    if (this.postgres) {
      const { rows } = await sql<{ held: boolean }>`select pg_try_advisory_xact_lock(${HIDDEN_FLAGS_LOCK}, cast(${memberId} as integer)) as held`.execute(trx);
      if (!rows[0]?.held) return 0;
    }
    const member = await trx.selectFrom('users').select(['status', 'posts_flagged']).where('id', '=', memberId).executeTakeFirst();
    const hide = member?.status !== 'active';
    if (member === undefined || member.posts_flagged === (hide ? 'all' : 'none')) return 0;
    const [from, to] = hide ? [0, 1] : [1, 0];
    const result = await trx.updateTable('posts').set({ author_hidden: to }).where('id', 'in', (eb) =>
      eb.selectFrom('posts').select('id').where('author_id', '=', memberId).where('author_hidden', '=', from)
        .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(batch),
    ).executeTakeFirst();
    // `some` while a post is left to change (either way: a member hidden again before all their
    // flags are cleared is due again), else done; in the same commit as the flags.
    await sql`update users set posts_flagged = case when exists (select 1 from posts where author_id = ${memberId} and author_hidden = ${from})
      then 'some' else ${hide ? 'all' : 'none'} end where id = ${memberId}`.execute(trx);
    return Number(result.numUpdatedRows);
  }

  async edit(id: number, authorId: number, edit: PostEdit, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('posts').set({
      category_id: edit.categoryId,
      title: edit.title,
      body: edit.body,
      body_html: edit.bodyHtml,
      excerpt: edit.excerpt,
      ...(edit.publish ? {
        status: 'published',
        // A draft is dated when it is published; a published post keeps its date.
        created_at: sql<number>`case when status = 'draft' then ${now} else created_at end`,
      } : {}),
      updated_at: now,
    }).where('id', '=', id).where('author_id', '=', authorId).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async publish(id: number, authorId: number, now: Instant): Promise<boolean> {
    const result = await this.db.updateTable('posts').set({ status: 'published', created_at: now, updated_at: now })
      .where('id', '=', id).where('author_id', '=', authorId).where('status', '=', 'draft').executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async delete(id: number, authorId: number): Promise<boolean> {
    // Its comments and likes go with it (`on delete cascade`, migration 2026-11-22-0001).
    const result = await this.db.deleteFrom('posts').where('id', '=', id).where('author_id', '=', authorId).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }

  /**
   * The counts go as one JSON object (`{"12": 3}`), so the statement's text is the same however
   * many posts a flush holds: one prepared statement on either database, never one per length
   * of a `VALUES` list, and no limit on parameters. The join leaves out a post deleted meanwhile.
   */
  async addViews(views: ReadonlyMap<number, number>): Promise<void> {
    if (views.size === 0) return;
    const counts = JSON.stringify(Object.fromEntries(views));
    await (this.postgres
      ? sql`update posts set view_count = view_count + cast(v.n as bigint)
          from jsonb_each_text(cast(${counts} as jsonb)) as v(id, n) where posts.id = cast(v.id as integer)`
      : sql`update posts set view_count = view_count + v.value
          from json_each(${counts}) as v where posts.id = cast(v.key as integer)`).execute(this.db);
  }

  // Both through `CompiledQueries.transaction`, as `Stores.transaction` is: in place inside one, in
  // SQLite's group commit, and retried as PostgreSQL's deadlock victim.
  like(postId: number, userId: number, now: Instant): Promise<boolean> {
    return this.queries.transaction(this.db, async (trx) => {
      const inserted = await trx.insertInto('post_likes').values({ post_id: postId, user_id: userId, created_at: now })
        .onConflict((oc) => oc.columns(['post_id', 'user_id']).doNothing()).executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await trx.updateTable('posts').set({ like_count: sql`like_count + 1` }).where('id', '=', postId).execute();
      return true;
    });
  }

  addComment(postId: number, authorId: number, body: string, now: Instant): Promise<Comment> {
    return this.queries.transaction(this.db, async (trx) => {
      const { id } = await trx.insertInto('comments')
        .values({ post_id: postId, author_id: authorId, body, created_at: now })
        .returning('id').executeTakeFirstOrThrow();
      await trx.updateTable('posts').set({ comment_count: sql`comment_count + 1` }).where('id', '=', postId).execute();
      const author = await trx.selectFrom('users').select(['username', 'nickname']).where('id', '=', authorId).executeTakeFirstOrThrow();
      return { id, postId, authorId, ...authorNames(author), body, createdAt: now };
    });
  }

  async listComments(postId: number): Promise<Comment[]> {
    return this.comments('comments.post_id', postId, { shown: true });
  }

  async listLikesBy(userId: number, after: KeysetCursor | undefined, limit: number): Promise<Array<{ postId: number; createdAt: Instant }>> {
    const rows = await this.db.selectFrom('post_likes').select(['post_id', 'created_at'])
      .where('user_id', '=', userId).where(afterRow('created_at', 'post_id', after))
      .orderBy('created_at').orderBy('post_id').limit(limit).execute();
    return rows.map((r) => ({ postId: r.post_id, createdAt: r.created_at }));
  }

  async listCommentsByAuthor(authorId: number, after: KeysetCursor | undefined, limit: number): Promise<Comment[]> {
    return this.comments('comments.author_id', authorId, { shown: false, page: { after, limit } });
  }

  /**
   * The comments of a post or of an author, oldest first; with `shown`, only those of active
   * members (`byActiveAuthor`); with `page`, only that page of them.
   */
  private async comments(
    by: 'comments.post_id' | 'comments.author_id', id: number, { shown, page }: { shown: boolean; page?: { after: KeysetCursor | undefined; limit: number } },
  ): Promise<Comment[]> {
    let query = this.db.selectFrom('comments').innerJoin('users', 'users.id', 'comments.author_id')
      .select(['comments.id', 'comments.post_id', 'comments.author_id', 'users.username', 'users.nickname', 'comments.body', 'comments.created_at'])
      .where(by, '=', id).orderBy('comments.created_at').orderBy('comments.id');
    if (page) query = query.where(afterRow('comments.created_at', 'comments.id', page.after)).limit(page.limit);
    const rows = await (shown ? query.where(byActiveAuthor) : query).execute();
    return rows.map((r) => ({
      id: r.id, postId: r.post_id, authorId: r.author_id, ...authorNames(r), body: r.body, createdAt: r.created_at,
    }));
  }
}

type PostRow = {
  id: number; category_id: number; category_name?: string; title: string; excerpt: string | null;
  like_count: number; comment_count: number; view_count: number; created_at: number; updated_at: number;
};

/** The author's columns as a user's row holds them: no nickname saved means the username. */
type AuthorRow = { username: string; nickname: string | null };

function authorNames(author: AuthorRow): { authorUsername: string; authorNickname: string } {
  return { authorUsername: author.username, authorNickname: author.nickname ?? author.username };
}

/** A row of `selectPosts`, which joins the author's names and selects the author and status. */
function toPostSummary(row: PostRow & AuthorRow & { author_id: number; status: string }): PostSummary {
  return toPostOf(row, row.author_id, row.status as PostStatus, row);
}

function toPostOf(row: PostRow, authorId: number, status: PostStatus, author: AuthorRow, categoryName = row.category_name): PostSummary {
  return {
    id: row.id,
    authorId,
    ...authorNames(author),
    categoryId: row.category_id,
    // A foreign key holds every post's category, so a name is missing only if it went meanwhile.
    categoryName: categoryName ?? '',
    title: row.title,
    // Null only between a migration and its fill step (see schema.ts): shown as no excerpt.
    excerpt: row.excerpt ?? '',
    status,
    likeCount: row.like_count,
    commentCount: row.comment_count,
    viewCount: row.view_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
