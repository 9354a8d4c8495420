/**
 * The staff console's pages (INTERFACE section 14): the overview, members, apps, signing keys and
 * the staff log, and the confirmation every change goes through. No script: every form is a POST
 * that answers a page saying what will happen, whose form repeats it with `confirm=yes`.
 */
import { type SecurityEvent, type Session, USER_STATUSES, type User, type UserStatus } from '../../core/accounts/ports.js';
import { describeUserAgent, deviceText } from '../../core/accounts/user-agent.js';
import type { SecondFactors } from '../../core/accounts/two-step.js';
import type { AuthorizedApplication } from '../../core/oauth/applications.js';
import { homepageAsRead, storedTarget } from '../../core/oauth/clients.js';
import type { Client, ReviewedClient } from '../../core/oauth/ports.js';
import type { LookAlikeSign } from '../../core/text.js';
import type { SigningKey } from '../../core/oidc/ports.js';
import { personalTokenStatus } from '../../core/credentials/personal-tokens.js';
import type { PersonalToken } from '../../core/credentials/ports.js';
import type { Translator } from '../../core/locales.js';
import { FIGURES, type Figure, ROLES, type Role, type StaffLogEntry } from '../../core/staff/ports.js';
import type { Overview } from '../../core/staff/figures.js';
import { reviewedText } from '../../core/staff/console.js';
import { REASON_MAX_LENGTH, REASON_MIN_LENGTH, type StaffMember } from '../../core/staff/staff.js';
import { type FormErrors, errorSummary, errorsFor } from './forms.js';
import { type Html, html } from './html.js';
import { type PageContext, type PageFrame, layout } from './layout.js';
import { stackedTable } from './stacked-table.js';
import { eventFrom, eventLine } from './security-events.js';
import { chosenName, isolated, personName, problemText, rich, sessionAddress, timeOf, tokenStatusWords } from './words.js';

export type ConsoleSection = 'overview' | 'members' | 'apps' | 'keys' | 'log';

/** The console's sections, in the order of its navigation: each one's page and the words of its link. */
const SECTIONS: ReadonlyArray<{ section: ConsoleSection; href: string; key: string }> = [
  { section: 'overview', href: '/admin', key: 'admin.navOverview' },
  { section: 'members', href: '/admin/members', key: 'admin.navMembers' },
  { section: 'apps', href: '/admin/apps', key: 'admin.navApps' },
  { section: 'keys', href: '/admin/keys', key: 'admin.navKeys' },
  { section: 'log', href: '/admin/staff-log', key: 'admin.navLog' },
];

/** A console page: the console's own navigation above `main`, `section` marked current (none on a page of no section); keys only for admins. */
export function consoleLayout(title: string, context: PageContext, staff: StaffMember, section: ConsoleSection | undefined, main: Html): Html {
  const { t } = context;
  const items = SECTIONS.filter((item) => item.section !== 'keys' || staff.role === 'admin');
  return layout(title, context, html`<div class="settings console">
<nav class="settings-nav" aria-label="${t.text('admin.consoleNavigation')}"><ul>
${items.map((item) => html`<li><a href="${item.href}"${item.section === section ? html` aria-current="page"` : ''}>${t.text(item.key)}</a></li>`)}
</ul></nav>
<div class="settings-main">${main}</div>
</div>`);
}

/**
 * The frame of an error met in the console (`errorPage`): the console's layout, with the section
 * of the address asked for marked current (a member's form is in Members), none for an address
 * of no section.
 */
export function consoleErrorFrame(context: PageContext, staff: StaffMember, path: string): PageFrame {
  const section = SECTIONS.find((item) => item.href !== '/admin' && (path === item.href || path.startsWith(`${item.href}/`)))?.section
    ?? (path === '/admin' ? 'overview' : undefined);
  return (title, main) => consoleLayout(title, context, staff, section, main);
}

/** The one page staff without two-step verification see, whatever they asked for. */
export function twoStepNeededPage(context: PageContext): Html {
  const { t } = context;
  return layout(t.text('admin.twoStepNeededTitle'), context, html`<section class="card narrow">
<h1>${t.text('admin.twoStepNeededTitle')}</h1>
<p>${t.text('admin.twoStepNeeded')}</p>
<p><a class="button" href="/settings/security">${t.text('admin.turnOnTwoStep')}</a></p>
</section>`);
}

export function statusWord(t: Translator, status: UserStatus): string {
  return t.text('admin.status', { status });
}

export function roleWord(t: Translator, role: Role): string {
  return t.text('admin.role', { role });
}

/** The reason field every change asks for (3 to 500 characters), with its problem if it had one. */
function reasonField(t: Translator, id: string, value: string, errors: FormErrors): Html {
  const problem = errorsFor(errors, 'reason')[0];
  return html`<label for="${id}">${t.text('admin.reason')}</label>
<textarea id="${id}" name="reason" rows="2" required minlength="${REASON_MIN_LENGTH}" maxlength="${REASON_MAX_LENGTH}" aria-describedby="${id}-hint${problem ? html` ${id}-error` : ''}"${problem ? html` aria-invalid="true"` : ''}>${value}</textarea>
<p class="hint" id="${id}-hint">${t.text('admin.reasonHint', { min: REASON_MIN_LENGTH, max: REASON_MAX_LENGTH })}</p>
${problem ? html`<p class="field-error" id="${id}-error">${problemText(t, problem)}</p>` : ''}`;
}

/** A change's first form: its own fields, a reason, and a button that leads to the confirmation. */
function changeForm(context: PageContext, id: string, action: string, fields: Html, button: string): Html {
  return html`<form method="post" action="${action}" class="staff-change">
<input type="hidden" name="_csrf" value="${context.csrf}">
${fields}
${reasonField(context.t, `${id}-reason`, '', undefined)}
<div class="actions"><button type="submit" class="secondary">${button}</button></div>
</form>`;
}

export interface StaffConfirmation {
  title: string;
  /** What will happen, in words. */
  consequences: string;
  /** What the change is about, shown below its consequences (an app's identity staff vouch for). */
  details?: Html;
  action: string;
  /** The change's own fields, sent again as hidden fields. */
  fields: Record<string, string>;
  reason: string;
  button: string;
  cancel: string;
  errors?: FormErrors;
}

/** The page between a change's form and the change: what will happen, the reason (still editable), and the button that does it. */
export function staffConfirmationPage(context: PageContext, staff: StaffMember, section: ConsoleSection, c: StaffConfirmation): Html {
  const { t } = context;
  return consoleLayout(c.title, context, staff, section, html`<section class="card confirm" aria-labelledby="confirm-heading">
<h1 id="confirm-heading">${c.title}</h1>
${errorSummary(c.errors, { t, labels: { reason: t.text('admin.reason') } })}
<p>${c.consequences}</p>
${c.details ?? ''}
<p>${t.text('admin.loggedNote')}</p>
<form method="post" action="${c.action}">
  <input type="hidden" name="_csrf" value="${context.csrf}">
  ${Object.entries(c.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <input type="hidden" name="confirm" value="yes">
  ${reasonField(t, 'confirm-reason', c.reason, c.errors)}
  <div class="actions"><button type="submit" class="danger">${c.button}</button> <a href="${c.cancel}" class="button secondary">${t.text('settings.cancel')}</a></div>
</form>
</section>`);
}

/** A change the rules do not allow this staff member (their own account, a fellow staff member, an admin's power). */
export function refusedPage(context: PageContext, staff: StaffMember, section: ConsoleSection, message: string, back: string): Html {
  const { t } = context;
  return consoleLayout(t.text('admin.refusedTitle'), context, staff, section, html`<section class="card">
<h1>${t.text('admin.refusedTitle')}</h1>
<p>${message}</p>
<p class="links"><a href="${back}">${t.text('admin.back')}</a></p>
</section>`);
}

function notice(message: string | undefined): Html | '' {
  return message === undefined ? '' : html`<p class="notice" role="status">${message}</p>`;
}

// ---- Members ---------------------------------------------------------------------------------

function searchForm(t: Translator, action: string, label: string, hint: string, query: string): Html {
  return html`<form method="get" action="${action}" role="search" class="console-search">
<label for="q">${label}</label>
<input type="text" id="q" name="q" value="${query}" maxlength="200" aria-describedby="q-hint">
<p class="hint" id="q-hint">${hint}</p>
<div class="actions"><button type="submit">${t.text('admin.search')}</button></div>
</form>`;
}

export function membersPage(context: PageContext, staff: StaffMember, query: string, found: readonly User[] | undefined, limit: number): Html {
  const { t } = context;
  return consoleLayout(t.text('admin.membersTitle'), context, staff, 'members', html`<section class="card">
<h1>${t.text('admin.membersTitle')}</h1>
${searchForm(t, '/admin/members', t.text('admin.findMember'), t.text('admin.findMemberHint'), query)}
</section>
${found === undefined ? '' : html`<section class="card" aria-labelledby="results-heading">
<h2 id="results-heading">${t.text('admin.results', { count: found.length })}</h2>
${found.length === limit ? html`<p class="hint">${t.text('admin.moreResults', { limit })}</p>` : ''}
${found.length === 0 ? '' : stackedTable(
    [{ heading: t.text('admin.member'), cellClass: 'links' }, { heading: t.text('admin.id') }, { heading: t.text('admin.statusHeading') }, { heading: t.text('admin.joined') }],
    found.map((u) => ({ cells: [html`<a href="/admin/members/${u.id}">${personName(u)}</a>`, u.id, statusWord(t, u.status), timeOf(context, u.createdAt)] })))}
</section>`}`);
}

export interface MemberView {
  user: User;
  role: Role;
  email: string | undefined;
  /** An address the member asked to change to, waiting for its link: staff looking into a mix-up see it. */
  pendingEmail: string | null;
  secondFactors: SecondFactors;
  sessions: readonly Session[];
  apps: readonly AuthorizedApplication[];
  tokens: readonly PersonalToken[];
  securityLog: readonly SecurityEvent[];
  staffLog: readonly StaffLogEntry[];
  /** What this staff member may do here: nothing on themselves, only members for a moderator. */
  mayChange: boolean;
  mayChangeRole: boolean;
  notice?: string | undefined;
}

export function memberPage(context: PageContext, staff: StaffMember, m: MemberView): Html {
  const { t } = context;
  const { user } = m;
  const base = `/admin/members/${user.id}`;
  return consoleLayout(t.text('admin.memberTitle', { username: user.username }), context, staff, 'members', html`<section class="card" aria-labelledby="member-heading">
<h1 id="member-heading">${personName(user)}</h1>
${notice(m.notice)}
<dl class="facts">
<dt>${t.text('admin.id')}</dt><dd>${user.id}</dd>
<dt>${t.text('admin.statusHeading')}</dt><dd><span class="tag${user.status === 'active' ? ' member' : ' off'}">${statusWord(t, user.status)}</span></dd>
<dt>${t.text('admin.roleHeading')}</dt><dd>${roleWord(t, m.role)}</dd>
<dt>${t.text('admin.email')}</dt><dd>${m.email ?? t.text('admin.none')}</dd>
${m.pendingEmail ? html`<dt>${t.text('admin.emailPending')}</dt><dd>${m.pendingEmail}</dd>\n` : ''}<dt>${t.text('admin.joined')}</dt><dd>${timeOf(context, user.createdAt)}</dd>
<dt>${t.text('admin.twoStep')}</dt><dd>${t.text('admin.twoStepSummary', { app: m.secondFactors.totp ? 'on' : 'off', passkeys: m.secondFactors.passkeys, codes: m.secondFactors.recoveryCodesLeft })}</dd>
</dl>
<p class="links"><a href="/u/${user.username}">${t.text('admin.publicPage')}</a></p>
</section>
${m.mayChange ? html`<section class="card" aria-labelledby="actions-heading">
<h2 id="actions-heading">${t.text('admin.actions')}</h2>
<h3>${t.text('admin.changeStatus')}</h3>
${changeForm(context, 'status', `${base}/status`, html`<label for="status">${t.text('admin.newStatus')}</label>
<select id="status" name="status">${USER_STATUSES.map((s) => html`<option value="${s}"${s === user.status ? html` selected` : ''}>${statusWord(t, s)}</option>`)}</select>`, t.text('admin.changeStatusButton'))}
<h3>${t.text('admin.signOutEverywhere')}</h3>
<p class="hint">${t.text('admin.signOutEverywhereHint')}</p>
${changeForm(context, 'sessions', `${base}/sessions/revoke`, html``, t.text('admin.signOutEverywhereButton'))}
<h3>${t.text('admin.resetTwoStep')}</h3>
<p class="hint">${t.text('admin.resetTwoStepHint')}</p>
${changeForm(context, 'two-step', `${base}/two-step/reset`, html``, t.text('admin.resetTwoStepButton'))}
${m.mayChangeRole ? html`<h3>${t.text('admin.changeRole')}</h3>
${changeForm(context, 'role', `${base}/role`, html`<label for="role">${t.text('admin.newRole')}</label>
<select id="role" name="role">${ROLES.map((r) => html`<option value="${r}"${r === m.role ? html` selected` : ''}>${roleWord(t, r)}</option>`)}</select>`, t.text('admin.changeRoleButton'))}` : ''}
</section>` : html`<p class="card muted">${t.text(user.id === staff.id ? 'admin.notOnYourself' : 'admin.notOnStaff')}</p>`}
<section class="card" aria-labelledby="sessions-heading">
<h2 id="sessions-heading">${t.text('admin.sessions', { count: m.sessions.length })}</h2>
${m.sessions.length === 0 ? '' : stackedTable(
    [{ heading: t.text('admin.device') }, { heading: t.text('admin.address') }, { heading: t.text('admin.signedIn') }, { heading: t.text('admin.lastSeen') }],
    m.sessions.map((s) => ({ cells: [deviceText(t, describeUserAgent(s.userAgent)), sessionAddress(t, s.address), timeOf(context, s.authTime), timeOf(context, s.lastSeenAt, { relative: true })] })))}
</section>
<section class="card" aria-labelledby="apps-heading">
<h2 id="apps-heading">${t.text('admin.authorizedApps', { count: m.apps.length })}</h2>
${m.apps.length === 0 ? '' : html`<ul class="links">${m.apps.map((a) => html`<li><a href="/admin/apps/${encodeURIComponent(a.client.clientId)}">${chosenName(a.client.name)}</a> <span class="muted">${a.scopes.join(' ')}</span></li>`)}</ul>`}
</section>
<section class="card" aria-labelledby="tokens-heading">
<h2 id="tokens-heading">${t.text('admin.personalTokens', { count: m.tokens.length })}</h2>
${m.tokens.length === 0 ? '' : stackedTable(
    [{ heading: t.text('admin.name') }, { heading: t.text('admin.scope') }, { heading: t.text('admin.created') }, { heading: t.text('admin.statusHeading') }],
    m.tokens.map((k) => ({ cells: [chosenName(k.name), html`<code>${k.scope}</code>`, timeOf(context, k.createdAt), tokenStatusWords(t, personalTokenStatus(k, context.now))] })))}
</section>
<section class="card" aria-labelledby="security-heading">
<h2 id="security-heading">${t.text('admin.securityLog')}</h2>
${m.securityLog.length === 0 ? html`<p class="muted">${t.text('admin.nothingYet')}</p>` : stackedTable(
    [{ heading: t.text('admin.when') }, { heading: t.text('admin.what') }, { heading: t.text('security.from') }],
    m.securityLog.map((e) => ({ kind: e.kind, cells: [timeOf(context, e.createdAt), eventLine(t, e), eventFrom(t, e)] })))}
</section>
<section class="card" aria-labelledby="staff-heading">
<h2 id="staff-heading">${t.text('admin.staffActionsHere')}</h2>
${staffLogTable(context, m.staffLog)}
</section>`);
}

// ---- The staff log ---------------------------------------------------------------------------

export function actionWords(t: Translator, entry: Pick<StaffLogEntry, 'action' | 'detail'>): string {
  const { status, role, verified } = entry.detail;
  return t.text('admin.action', {
    action: entry.action.replace('.', '_'),
    status: status === undefined ? '' : t.text(entry.action === 'app.status' ? 'admin.appStatus' : 'admin.status', { status }),
    role: role === undefined ? '' : t.text('admin.role', { role }),
    verified: verified === undefined ? '' : t.text(verified === 'yes' ? 'admin.yes' : 'admin.no'),
  });
}

function targetOf(entry: StaffLogEntry): Html {
  if (entry.targetKind === 'member') return html`<a href="/admin/members/${entry.targetId}">${chosenName(entry.targetName || entry.targetId)}</a>`;
  if (entry.targetKind === 'app') return html`<a href="/admin/apps/${encodeURIComponent(entry.targetId)}">${chosenName(entry.targetName || entry.targetId)}</a>`;
  return html``;
}

export function staffLogTable(context: PageContext, entries: readonly StaffLogEntry[]): Html {
  const { t } = context;
  if (entries.length === 0) return html`<p class="muted">${t.text('admin.nothingYet')}</p>`;
  return stackedTable(
    [{ heading: t.text('admin.when') }, { heading: t.text('admin.who'), cellClass: 'links' }, { heading: t.text('admin.what') }, { heading: t.text('admin.onWhom'), cellClass: 'links' }, { heading: t.text('admin.reason'), cellClass: 'reason' }],
    entries.map((e) => ({ cells: [timeOf(context, e.createdAt), e.actorId === null ? t.text('admin.commandLine') : html`<a href="/admin/members/${e.actorId}">${e.actorName}</a>`, actionWords(t, e), targetOf(e), e.reason] })),
    { tableClass: 'staff-log' },
  );
}

export function staffLogPage(context: PageContext, staff: StaffMember, entries: readonly StaffLogEntry[], older: string | undefined): Html {
  const { t } = context;
  return consoleLayout(t.text('admin.logTitle'), context, staff, 'log', html`<section class="card">
<h1>${t.text('admin.logTitle')}</h1>
<p class="hint">${t.text('admin.logHint')}</p>
${staffLogTable(context, entries)}
${older === undefined ? '' : html`<p class="links"><a href="${older}">${t.text('admin.older')}</a></p>`}
</section>`);
}

// ---- The overview ----------------------------------------------------------------------------

const CHART = { width: 280, height: 96, top: 14, bottom: 16, gap: 4 } as const;

/**
 * One figure's 14 days as bars (an SVG drawn here: no script, no library), with the highest day's
 * count on its scale line and today's bar darker. Colours are attributes, not CSS: the page's CSP
 * allows no inline style.
 */
function figureChart(t: Translator, figure: Figure, days: readonly string[], counts: readonly number[]): Html {
  const max = Math.max(1, ...counts);
  const plot = CHART.height - CHART.top - CHART.bottom;
  const slot = CHART.width / counts.length;
  const label = t.text('admin.figure', { figure });
  const id = `chart-${figure}`;
  return html`<figure class="figure-chart">
<figcaption id="${id}">${rich(t, 'admin.figureToday', { figure: label, count: counts[counts.length - 1] ?? 0, b: (chunks) => html`<strong>${chunks}</strong>` })}</figcaption>
<svg viewBox="0 0 ${CHART.width} ${CHART.height}" width="100%" role="img" aria-labelledby="${id} ${id}-desc" xmlns="http://www.w3.org/2000/svg">
<desc id="${id}-desc">${t.text('admin.chartDescription', { figure, max, total: counts.reduce((a, b) => a + b, 0) })}</desc>
<line x1="0" x2="${CHART.width}" y1="${CHART.top}" y2="${CHART.top}" stroke="#d0d7de" stroke-dasharray="3 3"/>
<text x="0" y="${CHART.top - 3}" font-size="10" fill="#57606a">${max}</text>
<line x1="0" x2="${CHART.width}" y1="${CHART.height - CHART.bottom}" y2="${CHART.height - CHART.bottom}" stroke="#8c959f"/>
${counts.map((count, i) => {
    const height = Math.round((count / max) * plot);
    const today = i === counts.length - 1;
    return html`<rect x="${(i * slot + CHART.gap / 2).toFixed(1)}" y="${CHART.height - CHART.bottom - height}" width="${(slot - CHART.gap).toFixed(1)}" height="${height}" fill="${today ? '#1f4f99' : '#6f9ad8'}"><title>${days[i]}: ${count}</title></rect>`;
  })}
<text x="0" y="${CHART.height - 3}" font-size="10" fill="#57606a">${days[0]!.slice(5)}</text>
<text x="${CHART.width}" y="${CHART.height - 3}" font-size="10" fill="#57606a" text-anchor="end">${days[days.length - 1]!.slice(5)}</text>
</svg>
</figure>`;
}

export function overviewPage(context: PageContext, staff: StaffMember, o: Overview, timeZone: string): Html {
  const { t } = context;
  return consoleLayout(t.text('admin.overviewTitle'), context, staff, 'overview', html`<section class="card" aria-labelledby="overview-heading">
<h1 id="overview-heading">${t.text('admin.overviewTitle')}</h1>
<p class="hint">${t.text('admin.overviewHint', { days: o.days.length, zone: timeZone })}</p>
<div class="figure-charts">${FIGURES.map((f) => figureChart(t, f, o.days, o.counts[f]))}</div>
</section>
<section class="card" aria-labelledby="figures-heading">
<h2 id="figures-heading">${t.text('admin.figuresTable')}</h2>
<div class="table-wrap"><table class="figures">
<thead><tr><th scope="col">${t.text('admin.day')}</th>${FIGURES.map((f) => html`<th scope="col">${t.text('admin.figure', { figure: f })}</th>`)}</tr></thead>
<tbody>${[...o.days.keys()].reverse().map((i) => html`<tr><th scope="row">${o.days[i]}</th>${FIGURES.map((f) => html`<td>${o.counts[f][i]}</td>`)}</tr>`)}</tbody>
</table></div>
</section>`);
}

// ---- Apps ------------------------------------------------------------------------------------

/**
 * An app's owner as the console names it: a member's page; "registered itself" for an app that
 * registered itself (RFC 7591, INTERFACE section 13); the site's operators for one the command line made.
 */
function ownerOf(t: Translator, client: Client, owner: Pick<User, 'id' | 'username' | 'nickname'> | null): Html {
  if (owner) return html`<a href="/admin/members/${owner.id}">${personName(owner)}</a>`;
  return html`<span class="muted">${t.text(client.selfRegistered ? 'admin.registeredItself' : 'admin.operators')}</span>`;
}

function verifiedTag(t: Translator, client: Client): Html {
  return client.verifiedAt === null ? html`${t.text('admin.no')}` : html`<span class="tag member">${t.text('admin.yes')}</span>`;
}

export function appsPage(context: PageContext, staff: StaffMember, query: string, apps: ReadonlyArray<{ client: Client; owner: Pick<User, 'id' | 'username' | 'nickname'> | null }>, limit: number): Html {
  const { t } = context;
  return consoleLayout(t.text('admin.appsTitle'), context, staff, 'apps', html`<section class="card">
<h1>${t.text('admin.appsTitle')}</h1>
${searchForm(t, '/admin/apps', t.text('admin.findApp'), t.text('admin.findAppHint'), query)}
</section>
<section class="card" aria-labelledby="results-heading">
<h2 id="results-heading">${t.text('admin.appResults', { count: apps.length })}</h2>
${apps.length === limit ? html`<p class="hint">${t.text('admin.moreResults', { limit })}</p>` : ''}
${apps.length === 0 ? '' : stackedTable(
    [{ heading: t.text('admin.app'), cellClass: 'links' }, { heading: t.text('admin.owner'), cellClass: 'links' }, { heading: t.text('admin.statusHeading') }, { heading: t.text('admin.verified') }],
    apps.map(({ client, owner }) => ({ cells: [html`<a href="/admin/apps/${encodeURIComponent(client.clientId)}">${chosenName(client.name)}</a><br><code class="muted">${client.clientId}</code>`, ownerOf(t, client, owner), t.text('admin.appStatus', { status: client.status }), verifiedTag(t, client)] })))}
</section>`);
}

/**
 * What staff vouch for when they verify an app, as `<dt>`/`<dd>` pairs: the name, description and
 * homepage its consent page shows beside "Verified by" (attack89: an owner's description stood
 * under the mark unseen), and its addresses. The homepage is text, never a link,
 * as the addresses are: homepages are checked to be http(s) where they are written, but the
 * console, with a staff session, does not rely on every row having passed that check (a
 * `javascript:` link would run here).
 */
function reviewedFacts(t: Translator, reviewed: ReviewedClient): Html {
  // Beside each address as written, where it takes a browser (`storedTarget`): one saved before
  // the redirect URIs' rules may read as one host and go to another.
  const target = (uri: string) => {
    const reached = storedTarget(uri);
    if (reached === undefined) return '';
    return html` <span class="muted">${'host' in reached ? t.text('admin.goesTo', { host: reached.host }) : t.text('admin.opensApp', { scheme: reached.appScheme })}</span>`;
  };
  const addresses = (uris: readonly string[]) => (uris.length === 0 ? t.text('admin.none') : uris.map((uri) => html`<code>${uri}</code>${target(uri)}<br>`));
  // A homepage is shown as a browser reads it already (`homepageAsRead`), with nothing beside it.
  const address = (uri: string | null, reached: (uri: string) => Html | '' = target) => (uri === null || uri === '' ? t.text('admin.none') : html`<code>${uri}</code>${reached(uri)}`);
  return html`<dt>${t.text('admin.name')}</dt><dd>${chosenName(reviewed.name)}</dd>
<dt>${t.text('admin.description')}</dt><dd>${reviewed.description === '' ? t.text('admin.none') : reviewed.description}</dd>
<dt>${t.text('admin.homepage')}</dt><dd>${address(homepageAsRead(reviewed.homepageUrl), () => '')}</dd>
<dt>${t.text('admin.redirectUris')}</dt><dd>${addresses(reviewed.redirectUris)}</dd>
<dt>${t.text('admin.postLogoutRedirectUris')}</dt><dd>${addresses(reviewed.postLogoutRedirectUris)}</dd>
<dt>${t.text('admin.backchannelLogoutUri')}</dt><dd>${address(reviewed.backchannelLogoutUri)}</dd>`;
}

/** The signs that an app's name may pass for another's (`lookAlikeSigns`), where staff look at it before vouching for it. */
function lookAlikeWarning(t: Translator, signs: readonly LookAlikeSign[]): Html | '' {
  return signs.length === 0 ? ''
    : html`<div class="alert" role="note"><p>${t.text('admin.nameLooksAlike')}</p><ul>${signs.map((sign) => html`<li>${t.text('admin.lookAlikeSign', { sign })}</li>`)}</ul></div>`;
}

/** The confirmation's list of what marking an app verified vouches for: the app as its page showed it, and the signs its name may imitate another's. */
export function vouchedFor(t: Translator, reviewed: ReviewedClient, signs: readonly LookAlikeSign[]): Html {
  return html`<p>${t.text('admin.confirmVerifiedReviewed')}</p>
<dl class="facts">
${reviewedFacts(t, reviewed)}
</dl>
${lookAlikeWarning(t, signs)}`;
}

export interface AppView {
  client: Client;
  owner: Pick<User, 'id' | 'username' | 'nickname'> | null;
  users: number;
  tokensLastDay: number;
  staffLog: readonly StaffLogEntry[];
  notice?: string | undefined;
  /** What may make its name pass for another's, for staff about to vouch for it (`lookAlikeSigns`). */
  nameSigns: readonly LookAlikeSign[];
}

export function appPage(context: PageContext, staff: StaffMember, a: AppView): Html {
  const { t } = context;
  const { client } = a;
  const base = `/admin/apps/${encodeURIComponent(client.clientId)}`;
  const next = client.status === 'active' ? 'deactivated' : 'active';
  return consoleLayout(isolated(client.name), context, staff, 'apps', html`<section class="card" aria-labelledby="app-heading">
<h1 id="app-heading">${chosenName(client.name)}</h1>
${notice(a.notice)}
<dl class="facts">
<dt>${t.text('admin.clientId')}</dt><dd><code>${client.clientId}</code></dd>
<dt>${t.text('admin.owner')}</dt><dd class="links">${ownerOf(t, client, a.owner)}</dd>
<dt>${t.text('admin.statusHeading')}</dt><dd>${t.text('admin.appStatus', { status: client.status })}</dd>
<dt>${t.text('admin.verified')}</dt><dd>${verifiedTag(t, client)}</dd>
<dt>${t.text('admin.created')}</dt><dd>${timeOf(context, client.createdAt)}</dd>
<dt>${t.text('admin.appUsers')}</dt><dd>${a.users}</dd>
<dt>${t.text('admin.tokensLastDay')}</dt><dd>${a.tokensLastDay}</dd>
${reviewedFacts(t, client)}
</dl>
${lookAlikeWarning(t, a.nameSigns)}
</section>
<section class="card" aria-labelledby="actions-heading">
<h2 id="actions-heading">${t.text('admin.actions')}</h2>
<h3>${t.text('admin.appStatusHeading')}</h3>
${changeForm(context, 'app-status', `${base}/status`, html`<input type="hidden" name="status" value="${next}">`, t.text('admin.appStatusButton', { status: next }))}
<h3>${t.text('admin.verified')}</h3>
<p class="hint">${t.text('admin.verifiedHint')}</p>
${changeForm(context, 'verified', `${base}/verified`, client.verifiedAt === null
    // The name, description, homepage and addresses above, vouched for only while the app still has them (its owner or its document may change them meanwhile).
    ? html`<input type="hidden" name="verified" value="yes"><input type="hidden" name="reviewed" value="${reviewedText(client)}">`
    : html`<input type="hidden" name="verified" value="no">`, t.text('admin.verifiedButton', { verified: client.verifiedAt === null ? 'yes' : 'no' }))}
</section>
<section class="card" aria-labelledby="staff-heading">
<h2 id="staff-heading">${t.text('admin.staffActionsOnApp')}</h2>
${staffLogTable(context, a.staffLog)}
</section>`);
}

// ---- Signing keys ----------------------------------------------------------------------------

export function keysPage(context: PageContext, staff: StaffMember, keys: readonly SigningKey[], notice_?: string): Html {
  const { t } = context;
  const now = context.now;
  const state = (k: SigningKey) => (k.activeAt > now ? 'waiting' : k.retiredAt !== null && k.retiredAt <= now ? 'retired' : 'signing');
  return consoleLayout(t.text('admin.keysTitle'), context, staff, 'keys', html`<section class="card">
<h1>${t.text('admin.keysTitle')}</h1>
${notice(notice_)}
<p class="hint">${t.text('admin.keysHint')}</p>
${stackedTable(
    [{ heading: t.text('admin.keyId') }, { heading: t.text('admin.algorithm') }, { heading: t.text('admin.keyState') }, { heading: t.text('admin.created') }, { heading: t.text('admin.signsFrom') }],
    keys.map((k) => ({ cells: [html`<code>${k.kid.slice(0, 16)}…</code>`, k.alg, t.text('admin.keyStateWord', { state: state(k) }), timeOf(context, k.createdAt), timeOf(context, k.activeAt)] })))}
<p><a class="button secondary" href="/admin/keys/rotate">${t.text('admin.rotateKeys')}</a></p>
</section>`);
}

export function rotateKeysPage(context: PageContext, staff: StaffMember, activationSeconds: number): Html {
  const { t } = context;
  return consoleLayout(t.text('admin.rotateKeys'), context, staff, 'keys', html`<section class="card">
<h1>${t.text('admin.rotateKeys')}</h1>
<p>${t.text('admin.rotateKeysHint', { seconds: activationSeconds })}</p>
${changeForm(context, 'rotate', '/admin/keys/rotate', html`<div class="check"><input type="checkbox" id="now" name="now" value="yes"><label for="now">${t.text('admin.rotateNow')}</label></div>`, t.text('admin.rotateKeysButton'))}
</section>`);
}
