import { ROLES, type StaffLogEntry } from '../../core/staff/ports.js';
import { REASON_MAX_LENGTH, checkReason, isRole, makeStaffChange, roleChangedLine } from '../../core/staff/staff.js';
import { formatUtc } from '../../core/time.js';
import { UsageError, type Values, defineCommand, optionalCount, optionalString, requiredString } from '../command.js';
import { withNotices } from '../owner-notices.js';
import { findUser } from './lookup.js';

/** `--reason T`: why the operator made a change, for the staff log (none given: empty). */
export const REASON_OPTION = {
  options: { reason: { type: 'string' } },
  help: { reason: `why, for the staff log (3 to ${REASON_MAX_LENGTH} characters; default: none given)` },
  usage: '[--reason T]',
  read(values: Values): string {
    const given = optionalString(values, 'reason');
    return given === undefined ? '' : checkReason(given);
  },
} as const;

export const userSetRole = defineCommand({
  name: 'user set-role',
  summary: 'make an account a member, a moderator or an admin',
  description: 'Sets an account\'s role in the staff console (/admin): moderators act on members and apps, admins also on roles and signing keys. Written to the staff log.',
  usage: `--username U --role ${ROLES.join('|')} ${REASON_OPTION.usage}`,
  options: { username: { type: 'string' }, role: { type: 'string' }, ...REASON_OPTION.options },
  help: { username: 'the account (any letter case)', role: 'the new role', ...REASON_OPTION.help },
  prints: '{"id","role"}',
  async run(deps, values, io) {
    const role = requiredString(values, 'role');
    if (!isRole(role)) throw new UsageError(`unknown role "${role}": use ${ROLES.join(', ')}`);
    const reason = REASON_OPTION.read(values);
    const user = await findUser(deps, requiredString(values, 'username'));
    const changed = await makeStaffChange(withNotices(deps), {
      actor: { via: 'cli' }, action: 'member.role', target: { kind: 'member', id: String(user.id), name: user.username }, reason,
      change: async (tx) => ((await tx.roles.setRole(user.id, role, deps.clock.now())) ? { result: role, detail: { role }, told: [roleChangedLine(user.id, role)] } : undefined),
    });
    if (!changed) throw new UsageError(`unknown user "${user.username}"`);
    io.afterAnswer('the member\'s notice mail could not be queued', changed.announce);
    return { id: user.id, role: changed.result };
  },
  human: (r) => `user ${r.id} is now ${r.role === 'admin' ? 'an' : 'a'} ${r.role}`,
});

const LOG_LIMIT = { default: 50, max: 1000 };

function listedEntry(entry: StaffLogEntry) {
  return {
    id: entry.id, at: formatUtc(entry.createdAt), actor_id: entry.actorId, actor: entry.actorName, action: entry.action,
    target_kind: entry.targetKind, target_id: entry.targetId, target: entry.targetName, detail: entry.detail, reason: entry.reason,
  };
}

export const staffLog = defineCommand({
  name: 'staff-log',
  summary: 'list what staff did, newest first',
  description: `Lists the staff log, newest first, ${LOG_LIMIT.default} entries at a time: pass the printed next_before as --before for older ones. The log is only ever appended to.`,
  usage: '[--before ID] [--limit N]',
  options: { before: { type: 'string' }, limit: { type: 'string' } },
  help: {
    before: 'only entries with an id below ID (the previous page\'s next_before)',
    limit: `at most N entries (default ${LOG_LIMIT.default}, at most ${LOG_LIMIT.max})`,
  },
  prints: '{"entries":[{"id","at","actor_id","actor","action","target_kind","target_id","target","detail","reason"}],"next_before"}: next_before is null on the last page',
  async run(deps, values) {
    const limit = optionalCount(values, 'limit') ?? LOG_LIMIT.default;
    if (limit < 1 || limit > LOG_LIMIT.max) throw new UsageError(`--limit must be from 1 to ${LOG_LIMIT.max}`);
    const before = optionalCount(values, 'before');
    const entries = await deps.stores.staffLog.list({ limit, ...(before === undefined ? {} : { beforeId: before }) });
    return { entries: entries.map(listedEntry), next_before: entries.length === limit ? entries[entries.length - 1]!.id : null };
  },
  human: (r) => {
    if (r.entries.length === 0) return 'the staff log is empty';
    // The reason as a JSON string: one line per entry, whatever line breaks staff wrote.
    const rows = r.entries.map((e) => `${e.at}  ${e.actor.padEnd(20)}  ${e.action.padEnd(24)}  ${`${e.target_kind} ${e.target}`.padEnd(30)}  ${JSON.stringify(e.detail)}  ${JSON.stringify(e.reason)}`);
    return [...rows, ...(r.next_before === null ? [] : [`(more: --before ${r.next_before})`])].join('\n');
  },
});
