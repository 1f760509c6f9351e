/**
 * `oas users`: the people and tools of a shared server. `add NAME --role viewer|analyst|admin` and
 * `token NAME` print a new token once (on standard output, alone on its line, for scripts); the
 * store keeps only its hash. `list` never shows a token. Users live where the server keeps its data
 * (the SQLite file of data_dir, or Redis with redis_url), so a running server sees them at once.
 */
import { openUsers } from '../app.js';
import type { Config } from '../config/schema.js';
import { osUser, type AuditAction, type AuditLog } from '../fs/audit-log.js';
import { hashToken, newToken, ROLES, USER_NAME, type Role, type UserStore } from '../store/users.js';
import { inertColumns, jsonInert } from '../text/inert.js';
import { EXIT_OK, UsageError } from './errors.js';

export interface UsersOptions {
  config?: string;
  dataDir?: string;
  redis?: string;
  role?: string;
  json?: boolean;
}

export type UsersAction = 'add' | 'list' | 'token' | 'remove' | 'role';

export async function usersCommand(action: UsersAction, name: string | undefined, options: UsersOptions): Promise<number> {
  if (action !== 'list') checkName(name);
  const role = action === 'add' || action === 'role' ? checkRole(options.role) : undefined;
  if (role === undefined && options.role !== undefined) throw new UsageError(`--role goes with oas users add, or oas users role NAME --role ROLE to change a role`);
  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.redis !== undefined) flags.redis_url = options.redis;
  const opened = await openUsers({ file: options.config, flags });
  try {
    const code = await run(opened.users, action, name!, role, options);
    audit(opened.audit, action, name!, role, 'success');
    return code;
  } catch (error) {
    if (error instanceof UsageError) audit(opened.audit, action, name!, role, 'failure', error.message);
    throw error;
  } finally {
    await opened.close();
  }
}

/** The audit trail's action of each change (`list` changes nothing). */
const AUDITED: Partial<Record<string, AuditAction>> = { add: 'user_added', token: 'user_token', remove: 'user_removed', role: 'user_role' };

/**
 * A user change in the audit trail (audit_log of the same configuration as the server's): the user
 * changed, `client` cli, the account that ran the command, the role given; never the token.
 */
function audit(log: AuditLog, action: UsersAction, name: string, role: Role | undefined, outcome: 'success' | 'failure', reason?: string): void {
  const kind = AUDITED[action];
  if (!kind) return;
  log.write({ action: kind, outcome, user: name, client: 'cli', os_user: osUser(), ...(role ? { role } : {}), ...(reason ? { reason } : {}) });
}

async function run(users: UserStore, action: UsersAction, name: string, role: Role | undefined, options: UsersOptions): Promise<number> {
  switch (action) {
    case 'add': {
      const token = newToken();
      const added = await users.add({ name, role: role!, created_at: new Date().toISOString(), last_used_at: null }, hashToken(token));
      if (!added) throw new UsageError(`user ${name} exists already (oas users token ${name} gives it a new token)`);
      process.stderr.write(`oas: user ${name} added as ${role}; its token, shown this once:\n`);
      process.stdout.write(`${token}\n`);
      return EXIT_OK;
    }
    case 'token': {
      const token = newToken();
      if (!(await users.setToken(name, hashToken(token)))) throw new UsageError(unknownUser(name));
      process.stderr.write(`oas: new token for ${name} (the old one no longer works), shown this once:\n`);
      process.stdout.write(`${token}\n`);
      return EXIT_OK;
    }
    case 'role':
      // A user a trusted proxy named (single sign-on) keeps the role given here from its next request.
      if (!(await users.setRole(name, role!))) throw new UsageError(unknownUser(name));
      process.stderr.write(`oas: user ${name} is now ${role === 'admin' ? 'an' : 'a'} ${role}\n`);
      return EXIT_OK;
    case 'remove':
      if (!(await users.remove(name))) throw new UsageError(unknownUser(name));
      process.stderr.write(`oas: user ${name} removed; its token no longer works\n`);
      return EXIT_OK;
    case 'list': {
      const list = await users.list();
      if (options.json) {
        process.stdout.write(`${jsonInert(JSON.stringify(list, null, 2))}\n`);
        return EXIT_OK;
      }
      if (list.length === 0) {
        process.stdout.write('no user yet: oas users add NAME --role viewer|analyst|admin\n');
        return EXIT_OK;
      }
      // A name a trusted proxy gave (single sign-on) is shown inert, its control characters as escapes.
      process.stdout.write(`${inertColumns([['Name', 'Role', 'Created', 'Last used'], ...list.map((u) => [u.name, u.role, u.created_at, u.last_used_at ?? 'never'])])}\n`);
      return EXIT_OK;
    }
  }
}

function checkName(name: string | undefined): void {
  if (name === undefined || name === '') throw new UsageError('give the user\'s name: oas users add NAME --role analyst');
  if (!USER_NAME.test(name)) throw new UsageError(`invalid user name "${name.slice(0, 60)}": letters, digits and . _ @ + - (at most 128), starting with a letter or digit`);
}

function checkRole(role: string | undefined): Role {
  if (role === undefined) throw new UsageError(`--role is required: ${ROLES.join(', ')}`);
  if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, not "${role.slice(0, 40)}"`);
  return role as Role;
}

function unknownUser(name: string): string {
  return `no user named ${name} (oas users list shows them)`;
}
