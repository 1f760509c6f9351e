/**
 * The audit trail (setting `audit_log`, OAS_AUDIT_LOG): one JSON object per line for each sign-in,
 * refused token, analysis started, result or export read, user change, configuration reload,
 * watchlist added, removed or run, and webhook delivery tried.
 *
 * Each line starts with `time` (ISO 8601), `user` (a name, or null), `client` (the address, or
 * `cli` for a command run on the server's machine, `oas` for what oas does by itself: a webhook
 * delivery), `action` and `outcome` (`success` or
 * `failure`), then the action's own fields (`reason` last, one line). Callers give names, ids,
 * counts and fixed reasons only: never a token, key, password or observable text. As a last guard
 * every string is cut to one line of at most 300 characters, its other control characters shown
 * as escapes (`\x1b`), and credential-looking URL parameters are masked.
 *
 * The file is private and append-only: its folder is created 0700 when missing, the file 0600
 * (narrowed when it exists wider), and each line is appended with one write(2) on a descriptor
 * opened O_APPEND, so two processes (two servers, or a server and `oas users`) writing the same
 * file never interleave inside a line. It is opened for each line: a file rotated or removed is
 * created again, and lines outlive restarts. A write that fails never fails the request: the
 * first failure is named once on stderr (`warn`), and later lines are tried again.
 */
import { closeSync, fchmodSync, fstatSync, openSync, constants, writeSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { maskUrlSecrets } from '../http/redact.js';
import { inertLine } from '../text/inert.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './private.js';

/** The actions of the audit trail (docs/audit-trail.md). */
export const AUDIT_ACTIONS = [
  'sign_in',
  'bad_token',
  'analysis_started',
  'results_read',
  'export_read',
  'user_added',
  'user_removed',
  'user_token',
  'user_role',
  'config_reloaded',
  'watchlist_added',
  'watchlist_removed',
  'watchlist_run',
  'webhook_delivery',
  'results_pushed',
  'allowlist_added',
  'allowlist_removed',
  'mark_added',
  'mark_removed',
  'doctor_run',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Where an analysis was started or its results read: the API, the web pages (through the API), MCP,
 * MISP's enrichment (misp-modules' `POST /query`, issue 39), the Cortex API (`/cortex`, issue 39).
 */
export type AuditOrigin = 'api' | 'web' | 'mcp' | 'misp' | 'cortex';

/** What an action's own fields hold. */
export type AuditValue = string | number | boolean | null | undefined | readonly string[];

export interface AuditEvent {
  action: AuditAction;
  outcome: 'success' | 'failure';
  /** Who: a user's name (`api_token` for the API token), or null when unknown (a refused token). */
  user: string | null | undefined;
  /** The client's address, or `cli` for a command on this machine. */
  client: string;
  /** Why it failed (or what happened), one line; never a secret. */
  reason?: string | undefined;
  [field: string]: AuditValue;
}

export interface AuditLog {
  /** The file (absolute), or undefined when the setting is empty. */
  readonly path: string | undefined;
  /** Appends one line; never throws. */
  write(event: AuditEvent): void;
}

export interface AuditOptions {
  /** One line about a failure to write (default: stderr). */
  warn?: (line: string) => void;
  /** The clock (tests). */
  now?: () => Date;
  /**
   * Opens the file at once (default), so that a server names a problem as it starts; false: at
   * the first line (`oas users list` writes none).
   */
  prepare?: boolean;
}

const MAX_CHARS = 300;
const MAX_LIST = 100;

/** The trail of setting `audit_log` (`''`: none). */
export function openAuditLog(path: string, options: AuditOptions = {}): AuditLog {
  const warn = options.warn ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const now = options.now ?? (() => new Date());
  const file = path === '' ? undefined : resolve(path);
  /** A failure named already (once, until a line is written again). */
  let warned = false;
  /** Opened once by this process (a file found wider than 0600 is narrowed then). */
  let seen = false;

  const fail = (target: string, error: unknown) => {
    if (warned) return;
    warned = true;
    warn(`oas: cannot write the audit trail to ${target} (setting audit_log): ${reasonOf(error)}; requests go on, unaudited until it can`);
  };

  /** Opens for appending (created 0600; folder 0700 when missing; narrowed at its first open). */
  const open = (target: string): number => {
    const narrowWide = !seen;
    let fd: number;
    try {
      fd = openSync(target, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, PRIVATE_FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      ensurePrivateDir(dirname(target));
      fd = openSync(target, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, PRIVATE_FILE_MODE);
    }
    try {
      const info = fstatSync(fd);
      // Just created (empty), whatever the umask made of it; or found wider at start.
      const mode = info.mode & 0o777;
      if ((info.size === 0 && mode !== PRIVATE_FILE_MODE) || (narrowWide && (mode & 0o077) !== 0)) fchmodSync(fd, PRIVATE_FILE_MODE);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    seen = true;
    return fd;
  };

  if (file !== undefined && (options.prepare ?? true)) {
    try {
      closeSync(open(file));
    } catch (error) {
      fail(file, error);
    }
  }

  const write = (event: AuditEvent) => {
    const target = file;
    if (target === undefined) return;
    let line: Buffer;
    try {
      line = Buffer.from(`${serialize(event, now())}\n`, 'utf8');
    } catch (error) {
      fail(target, error);
      return;
    }
    let fd: number | undefined;
    try {
      fd = open(target);
      const written = writeSync(fd, line, 0, line.length);
      if (written !== line.length) throw new Error(`short write (${written} of ${line.length} bytes)`);
      warned = false; // writing again: a later failure is named again
    } catch (error) {
      fail(target, error);
    } finally {
      if (fd !== undefined) {
        try {
          closeSync(fd);
        } catch {
          // nothing more to do
        }
      }
    }
  };

  return { path: file, write };
}

/** The line: time, user, client, action, outcome, the action's fields, reason last. */
export function serialize(event: AuditEvent, time: Date): string {
  const { action, outcome, user, client, reason, ...rest } = event;
  const out: Record<string, unknown> = {
    time: time.toISOString(),
    user: user === undefined || user === null ? null : clean(user),
    client: clean(client),
    action,
    outcome,
  };
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined || key in out) continue;
    out[key] = typeof value === 'string' ? clean(value)
      : Array.isArray(value) ? (value as readonly string[]).slice(0, MAX_LIST).map((item) => clean(String(item)))
      : value;
  }
  if (reason !== undefined) out.reason = clean(reason);
  return JSON.stringify(out);
}

/**
 * One line, at most MAX_CHARS, credential-looking URL parameters masked, inert
 * (src/text/inert.ts): line breaks as a space, any other control or bidi character (ESC, C1,
 * U+202E...) as a visible escape such as `\x1b`, which JSON.stringify would otherwise leave raw.
 */
function clean(value: string): string {
  const line = inertLine(maskUrlSecrets(value));
  return line.length > MAX_CHARS ? `${line.slice(0, MAX_CHARS - 1)}…` : line;
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a part of the path is not a folder';
  if (code === 'EISDIR') return 'it is a folder';
  if (code === 'ENOSPC') return 'no space left on the device';
  if (code === 'EROFS') return 'read-only file system';
  return code ? `${code}: ${message.replace(/^[A-Z]+: /, '')}` : message;
}

/** The account that ran a command on the server's machine (`os_user` of `oas users`, `oas watch`, `oas push` lines), or null when none is known. */
export function osUser(): string | null {
  try {
    return userInfo().username;
  } catch {
    return null;
  }
}
