/**
 * The demo: a user with published posts in two categories and a draft, other members whose
 * comments and likes are what the posts' counts say, a confidential client
 * (used by the demo app at /demo-app, with its post-logout redirect URI and back-channel logout
 * URI registered) and a public one, so `npm start` is ready to click through. What the members
 * wrote is in Chinese, as most of the community reads; the pages' own words follow each reader's
 * language.
 */
import { createHash, randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { Settings } from './config/settings.js';
import { createAccount } from './core/accounts/accounts.js';
import { verifyPassword } from './core/accounts/passwords.js';
import { registerClient } from './core/oauth/clients.js';
import type { Client } from './core/oauth/ports.js';
import type { UserStatus } from './core/accounts/ports.js';
import type { Stores } from './core/stores.js';
import { commentOnPost, writePost } from './core/community/posts.js';
import { readPrivateFile, writePrivateFile } from './storage/directories.js';
import type { Clock } from './core/time.js';

export const DEMO_USERNAME = 'demo';

export interface DemoCredentials {
  username: string;
  password: string;
  /**
   * SHA-256 of the password hash stored when `password` was set (`passwordHashDigest`): a hash
   * stored since differs, so the banner knows the password was set again without hashing it with
   * argon2 at each start. Absent from credentials written before it was kept.
   */
  passwordHashDigest?: string;
  /**
   * `postLogoutRedirectUri` is absent from credentials written before logout existed. `movedFrom`
   * is the demo app's redirect URI before a move of it (`moveDemoApp`): the file is kept before
   * the move commits, so until a start finds the database at `redirectUri` it may still be there.
   */
  confidentialClient: { clientId: string; clientSecret: string; redirectUri: string; postLogoutRedirectUri?: string; movedFrom?: string };
  publicClient: { clientId: string; redirectUri: string };
}

/**
 * Other members, who comment and like, so every count the demo shows is a count of real rows: a
 * post that says "3 comments" lists three, one that says "5 likes" was liked by five members.
 * Their passwords are random and kept nowhere: no one signs in as them.
 */
const MEMBERS = [
  { username: 'mara', bio: '拍风景，多半在早饭之前。' },
  { username: 'theo', bio: '街头摄影，外加一杯浓咖啡。' },
  { username: 'lin', bio: '住在港口边。' },
  { username: 'sam', bio: '能用社区账号登录的应用，我都要试一遍。' },
  { username: 'ines', bio: '每个包里都有一台胶片相机。' },
] as const;

type Member = (typeof MEMBERS)[number]['username'] | typeof DEMO_USERNAME;

/** The demo's posts, each with the comments and likes it shows. Views are a counter: no rows. */
export const DEMO_POSTS: ReadonlyArray<{
  category: string; title: string; body: string; views: number;
  comments: ReadonlyArray<readonly [Member, string]>; likedBy: readonly Member[];
}> = [
  {
    category: '公告', title: '欢迎来到社区', body: '这是本站的**第一篇**帖子。欢迎在评论里打个招呼！', views: 240,
    comments: [['mara', '大家好！很高兴来到这里。'], ['theo', '你好！期待看到大家分享的内容。'], ['lin', '来自城里港口那一边的问候。']],
    likedBy: ['mara', 'theo', 'lin', 'sam', 'ines'],
  },
  {
    category: '公告', title: '现在可以用社区账号登录其他应用了', body: '第三方应用现在可以通过*使用社区账号登录*让你登录，并且只有在你同意之后，才能读取你的公开资料和帖子。', views: 130,
    comments: [['sam', '好消息：随时都可以在设置里撤销某个应用的访问权限。']],
    likedBy: ['mara', 'sam'],
  },
  {
    category: '摄影', title: '港口上空的晨光', body: '早上 6:40 用 35mm 镜头拍的。渡轮刚开始开航，雾就散了，光线变成金色，持续了大约四分钟，之后云又回来了。', views: 410,
    comments: [
      ['theo', '为了这四分钟，早起也值了。'], ['mara', '颜色太美了。'],
      ['ines', '中间那艘是哪一班渡轮？'], ['demo', '6:45 开往离岛的那班。'],
      ['lin', '那天早上我也在，在另一个码头！'],
    ],
    likedBy: ['mara', 'theo', 'lin', 'sam', 'ines'],
  },
  {
    category: '摄影', title: '胶片还是数码？', body: '我一直拿不定主意。胶片让我慢下来，数码让我敢于尝试。你们用什么？', views: 98,
    comments: [
      ['sam', '工作用数码，度假用胶片。'], ['mara', '胶片。一卷只有三十六张，按快门前会多想想。'],
      ['theo', '数码，配一支定焦镜头，让自己慢下来。'], ['ines', '两个都用：包里总放着一台便宜的胶片相机。'],
      ['lin', '数码。我可等不了一个星期才看到照片。'], ['demo', '谢谢大家，很有帮助！'],
    ],
    likedBy: ['theo'],
  },
];

/**
 * When the demo is seeded: `svc demo` adds it to a database without the demo user; a start seeds
 * it only on a new database: no account, no client, and no start has finished preparing it (no
 * signing key: a start makes its keys after its seed). So a first start killed between its
 * migrations and its seed leaves a database the next start seeds; a database whose first start
 * ran with `DEMO=0`, or whose accounts were all removed, is never given the demo by a later one
 * (attack68); and an operator's own members and apps never get it beside them.
 */
export type DemoSeedCondition = 'no demo user' | 'new database';

/** Whether `when` holds, read in the seed's transaction. */
async function seedable(tx: Stores, when: DemoSeedCondition): Promise<boolean> {
  if (when === 'no demo user') return await tx.users.findByUsername(DEMO_USERNAME) === undefined;
  return (await tx.users.list({ afterId: 0, limit: 1 })).length === 0 && (await tx.keys.listAll()).length === 0
    && (await tx.clients.listAll()).length === 0;
}

/** How a demo is seeded. */
export interface DemoSeeding {
  /** The service's address, in the demo clients' redirect URIs. */
  baseUrl: string;
  when: DemoSeedCondition;
  /** Keeps the credentials for the operator (`saveDemoCredentials`), before the seed commits. */
  keep?: (credentials: DemoCredentials) => void;
}

/**
 * Seeds the demo if `when` holds, in one transaction: all of it or none, so a start killed midway
 * leaves a database the next start seeds. The credentials are kept before the commit, so a
 * committed demo always has them; a file kept for a seed that then failed to commit is
 * overwritten by the next seed. Returns what was created. The demo user's password is random
 * (INTERFACE section 8): a fixed one would own the demo clients on every install that kept the
 * demo.
 */
export async function seedDemo(stores: Stores, clock: Clock, { baseUrl, when, keep }: DemoSeeding): Promise<DemoCredentials | undefined> {
  return stores.transaction(async (tx) => {
    if (!await seedable(tx, when)) return undefined;
    const credentials = await seedDemoData(tx, clock, baseUrl);
    keep?.(credentials);
    return credentials;
  });
}

/** The demo's accounts, posts and clients. */
async function seedDemoData(stores: Stores, clock: Clock, baseUrl: string): Promise<DemoCredentials> {
  const password = randomBytes(15).toString('base64url');
  const user = await createAccount(stores, clock, {
    username: DEMO_USERNAME, password, bio: '每个新功能我都先试一试。', member: true, level: 7, xp: 1830,
  });
  const { passwordHash } = (await stores.users.findCredentials(DEMO_USERNAME))!;
  const ids = new Map<Member, number>([[DEMO_USERNAME, user.id]]);
  for (const member of MEMBERS) {
    const account = await createAccount(stores, clock, { username: member.username, password: randomBytes(15).toString('base64url'), bio: member.bio });
    ids.set(member.username, account.id);
  }
  for (const post of DEMO_POSTS) {
    const { id } = await writePost(stores, clock, {
      authorId: user.id, title: post.title, body: post.body, category: post.category, status: 'published', viewCount: post.views,
    });
    for (const [author, text] of post.comments) await commentOnPost(stores, clock, id, ids.get(author)!, text);
    for (const liker of post.likedBy) await stores.posts.like(id, ids.get(liker)!, clock.now());
  }
  await writePost(stores, clock, {
    authorId: user.id, title: '关于镜头的一些未完成的想法', body: '草稿：还没准备好分享。',
    category: '摄影', status: 'draft',
  });
  const demoApp = demoAppAddresses(baseUrl);
  const demoAppRedirect = demoApp.redirect;
  const demoAppSignedOut = demoApp.signedOut;
  const confidential = await registerClient(stores, clock, {
    name: 'Demo App', type: 'confidential', redirectUris: [demoAppRedirect], ownerId: user.id,
    homepageUrl: demoApp.home, description: '随本服务附带的示例应用。',
    // The demo app signs out through /oauth/logout and is told of sign-outs at the site.
    postLogoutRedirectUris: [demoAppSignedOut], backchannelLogoutUri: demoApp.backchannel,
  });
  const publicRedirect = 'http://127.0.0.1/callback';
  const publicClient = await registerClient(stores, clock, {
    name: 'Demo CLI', type: 'public', redirectUris: [publicRedirect, demoAppRedirect], ownerId: user.id,
    description: '示例公开客户端（命令行或手机应用），使用 PKCE，没有密钥。',
  });
  return {
    username: DEMO_USERNAME,
    password,
    passwordHashDigest: passwordHashDigest(passwordHash),
    confidentialClient: {
      clientId: confidential.client.clientId, clientSecret: confidential.secret!, redirectUri: demoAppRedirect, postLogoutRedirectUri: demoAppSignedOut,
    },
    publicClient: { clientId: publicClient.client.clientId, redirectUri: publicRedirect },
  };
}

/** The demo app's addresses when the service is at `baseUrl`. */
export function demoAppAddresses(baseUrl: string) {
  return {
    home: `${baseUrl}/demo-app`,
    redirect: `${baseUrl}/demo-app/callback`,
    signedOut: `${baseUrl}/demo-app/signed-out`,
    backchannel: `${baseUrl}/demo-app/backchannel-logout`,
  };
}

/** A move of the kept demo's app to the service's address (`moveDemoApp`). */
export interface DemoMove {
  /** The service's address, where the demo app is to be. */
  baseUrl: string;
  credentials: DemoCredentials;
  /** Keeps the moved credentials for the operator (`saveDemoCredentials`), before the move commits. */
  keep: (credentials: DemoCredentials) => void;
}

const DEMO_APP_REDIRECT = '/demo-app/callback';

/**
 * Whether `moveDemoApp` has anything to do for a start at `baseUrl`: not when the kept file names
 * the demo app there and no move left to settle (every start but a move's and the one after), nor
 * when it names no demo app (a file edited by hand to another address).
 */
export function demoAppMoves(credentials: DemoCredentials, baseUrl: string): boolean {
  const kept = credentials.confidentialClient;
  return kept.redirectUri.endsWith(DEMO_APP_REDIRECT) && (kept.redirectUri !== demoAppAddresses(baseUrl).redirect || kept.movedFrom !== undefined);
}

/**
 * The kept demo, its app moved to the service's address when a start serves at another one than
 * the demo was seeded for (another `PORT` or `BASE_URL`): the demo app sent members back to the
 * first start's port, where nothing listened, and its home page was linked there. Only the demo's
 * own clients (the demo account's) change, and of their addresses only the demo app's; any other
 * address a person gave them stays. In one transaction, the file kept before it commits: a start
 * that cannot write it (a root start refused the service user's `./data`, a full disk) leaves the
 * database as it was, where a move committed first left the demo app at an address the file did
 * not name, never moved back (attack74). The file is the record of where the demo app is: only
 * its addresses at the file's origin move, so an address an operator added, at any other origin,
 * stays (attack75 found one rewritten when the database's addresses were read as the demo's).
 * A file kept for a move also names where the move came from (`movedFrom`), until a start finds
 * the database at its address: a process killed between keeping the file and the commit left
 * the file ahead of the database, and the demo app at an address its client did not have, for good.
 */
export async function moveDemoApp(stores: Stores, clock: Clock, { baseUrl, credentials, keep }: DemoMove): Promise<DemoCredentials> {
  if (!demoAppMoves(credentials, baseUrl)) return credentials;
  const kept = credentials.confidentialClient;
  const wanted = demoAppAddresses(baseUrl);
  const demoApps = (redirect: string | undefined) => redirect?.endsWith(DEMO_APP_REDIRECT) ? [demoAppAddresses(redirect.slice(0, -DEMO_APP_REDIRECT.length))] : [];
  return stores.transaction(async (tx) => {
    const owner = await tx.users.findByUsername(DEMO_USERNAME);
    const clients: Client[] = [];
    for (const clientId of [kept.clientId, credentials.publicClient.clientId]) {
      const client = await tx.clients.findById(clientId);
      // Another owner's client named in the file is never changed through it (attack74).
      if (client && owner && client.ownerId === owner.id) clients.push(client);
    }
    // Still where the file's move came from when that move never committed; else where the file says.
    const registered = clients.find((client) => client.clientId === kept.clientId)?.redirectUris ?? [];
    const from = kept.movedFrom !== undefined && !registered.includes(kept.redirectUri) && registered.includes(kept.movedFrom) ? kept.movedFrom : kept.redirectUri;
    const mover = (...olds: ReturnType<typeof demoAppAddresses>[]) => (uri: string) => {
      for (const old of olds) {
        const which = (Object.keys(old) as (keyof typeof old)[]).find((key) => old[key] === uri);
        if (which) return wanted[which];
      }
      return uri;
    };
    const moved = mover(...demoApps(from));
    const differ = (a: readonly string[], b: readonly string[]) => a.some((uri, i) => uri !== b[i]);
    const now = clock.now();
    for (const client of clients) {
      const redirectUris = client.redirectUris.map(moved);
      if (differ(redirectUris, client.redirectUris)) await tx.clients.setRedirectUris(client.clientId, redirectUris, now, 'operator');
      const postLogoutRedirectUris = client.postLogoutRedirectUris.map(moved);
      const backchannelLogoutUri = client.backchannelLogoutUri === null ? null : moved(client.backchannelLogoutUri);
      if (differ(postLogoutRedirectUris, client.postLogoutRedirectUris) || backchannelLogoutUri !== client.backchannelLogoutUri) {
        await tx.clients.setLogoutUris(client.clientId, { postLogoutRedirectUris, backchannelLogoutUri }, now, 'operator');
      }
      // The link the consent page and the member's list of apps show.
      if (moved(client.homepageUrl) !== client.homepageUrl) {
        await tx.clients.setDetails(client.clientId, { name: client.name, description: client.description, homepageUrl: moved(client.homepageUrl) }, now, 'operator');
      }
    }
    // The file's own sign-out address is at its own origin, which a move that never committed left ahead of `from`'s.
    const movedInFile = mover(...demoApps(from), ...demoApps(kept.redirectUri));
    const { movedFrom: _settled, ...rest } = kept;
    const movedCredentials: DemoCredentials = {
      ...credentials,
      confidentialClient: {
        ...rest, redirectUri: wanted.redirect,
        ...kept.postLogoutRedirectUri === undefined ? {} : { postLogoutRedirectUri: movedInFile(kept.postLogoutRedirectUri) },
        ...from === wanted.redirect ? {} : { movedFrom: from },
      },
    };
    keep(movedCredentials);
    return movedCredentials;
  });
}

/**
 * Where the demo's credentials are kept: beside the embedded database; for PostgreSQL in ./data,
 * under a name of that database's own. Two databases never share (or overwrite) one file.
 */
export function demoCredentialsPath(settings: Settings): string {
  const { database } = settings;
  if (database.kind === 'sqlite' && database.path !== ':memory:') {
    // Beside the default database as demo-credentials.json; beside another under its own name,
    // so two databases in one folder keep their own.
    const name = basename(database.path);
    return join(dirname(database.path), name === 'svc.sqlite' ? 'demo-credentials.json' : `${name}.demo-credentials.json`);
  }
  const name = database.kind === 'postgres' ? createHash('sha256').update(database.url).digest('hex').slice(0, 12) : 'memory';
  return join('./data', `demo-credentials-${name}.json`);
}

/**
 * Keeps what `seedDemo` made, readable by the operator only (`writePrivateFile`): the database
 * holds only hashes. A start that cannot write it fails, saying so, before the seed commits.
 */
export function saveDemoCredentials(settings: Settings, credentials: DemoCredentials): void {
  const path = demoCredentialsPath(settings);
  const what = 'the demo credentials (DEMO=0 starts without the demo, for good: the database is no longer new)';
  // Made by a command run as root, the file is the database's owner's, as its lock file is.
  const { database } = settings;
  writePrivateFile(path, `${JSON.stringify(credentials, null, 2)}\n`, what, database.kind === 'sqlite' && database.path !== ':memory:' ? database.path : dirname(path));
}

/**
 * The kept credentials, if they are this database's: a file left by a seed that never committed
 * (a start killed just before), or kept from a database since replaced, names a client the
 * database does not have, and the banner would show it and the demo app use it (attack69).
 */
export async function liveDemoCredentials(settings: Settings, stores: Stores): Promise<DemoCredentials | undefined> {
  const credentials = readDemoCredentials(settings);
  const client = credentials && await stores.clients.findById(credentials.confidentialClient.clientId);
  return client?.status === 'active' ? credentials : undefined;
}

/** What the kept hash is compared by: its digest, so the file holds no second copy of the hash itself. */
const passwordHashDigest = (passwordHash: string): string => createHash('sha256').update(passwordHash).digest('hex');

/**
 * The demo account as the banner shows it: its status (`undefined` once it is gone), and whether
 * the kept password still signs it in (`svc user set-password`, a reset or a change on the site
 * set another: attack70 7). Known only for credentials kept with their hash's digest. A hash other
 * than the kept one's may be the same password's, hashed again with today's parameters at a
 * sign-in (`rehashIfOutdated`): the kept password is tried against it then, and only then (a
 * demo seeded before decision 66 was otherwise told at every start after its first sign-in that
 * its password was set again).
 */
export async function demoAccount(stores: Stores, credentials: DemoCredentials): Promise<{ status: UserStatus | undefined; passwordKept: boolean }> {
  const found = await stores.users.findCredentials(credentials.username);
  const kept = credentials.passwordHashDigest;
  const passwordKept = found === undefined || kept === undefined || passwordHashDigest(found.passwordHash) === kept
    || await verifyPassword(found.passwordHash, credentials.password);
  return { status: found?.user.status, passwordKept };
}

function readDemoCredentials(settings: Settings): DemoCredentials | undefined {
  return readKeptDemo(settings).credentials;
}

/**
 * Why a kept credentials file is not taken, when one is there and cannot be (edited by hand into
 * another shape, or cut short), for the start's one line: without it the banner and the demo app
 * went without the demo and nothing said why (attack80 F4). `undefined` when there is no file to
 * read or it is taken.
 */
export function keptDemoProblem(settings: Settings): string | undefined {
  return readKeptDemo(settings).problem;
}

function readKeptDemo(settings: Settings): { credentials?: DemoCredentials; problem?: string } {
  let text: string | undefined;
  try {
    text = readPrivateFile(demoCredentialsPath(settings));
  } catch {
    return {};
  }
  if (text === undefined) return {};
  let kept: unknown;
  try {
    kept = JSON.parse(text);
  } catch {
    return { problem: 'it is not JSON' };
  }
  return isDemoCredentials(kept) ? { credentials: kept } : { problem: 'it is not what a start writes (a field missing, or not text)' };
}

/**
 * Whether `kept` has the shape `seedDemo` writes: a file of another shape (edited by hand, or
 * planted) failed every start on its first missing field (attack70). Checked by hand: zod, loaded
 * with the MCP SDK only when first needed, would be loaded at every start for this.
 */
function isDemoCredentials(kept: unknown): kept is DemoCredentials {
  const strings = (value: unknown, ...names: string[]) => typeof value === 'object' && value !== null
    && names.every((name) => typeof (value as Record<string, unknown>)[name] === 'string');
  const { confidentialClient, publicClient } = (kept ?? {}) as Partial<Record<keyof DemoCredentials, unknown>>;
  const { postLogoutRedirectUri: signOut, movedFrom } = (confidentialClient ?? {}) as { postLogoutRedirectUri?: unknown; movedFrom?: unknown };
  const digest = (kept as { passwordHashDigest?: unknown } | undefined)?.passwordHashDigest;
  return strings(kept, 'username', 'password') && (digest === undefined || typeof digest === 'string')
    && strings(confidentialClient, 'clientId', 'clientSecret', 'redirectUri')
    && [signOut, movedFrom].every((uri) => uri === undefined || typeof uri === 'string') && strings(publicClient, 'clientId', 'redirectUri');
}
