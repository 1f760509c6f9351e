/**
 * `oas allow` and `oas mark` (issue 38): what the team already knows, changed and listed from a
 * terminal. The lists live where the server keeps its data (the SQLite file of data_dir, or Redis
 * with redis_url), so a running server and its workers use a change from their next analysis on.
 * The author of a change is the local account, `cli:<name>`; every change is a line of the audit
 * trail (audit_log of the same configuration).
 */
import { openKnowledge } from '../app.js';
import { KnowledgeInputError, KnowledgeNotFoundError, type ListedEntry, type StoredMark, type TeamKnowledge } from '../analysis/knowledge.js';
import type { Config } from '../config/schema.js';
import { osUser, type AuditAction, type AuditLog } from '../fs/audit-log.js';
import { inertColumns, inertLine, jsonInert } from '../text/inert.js';
import { EXIT_OK, UsageError } from './errors.js';

export interface KnowledgeOptions {
  config?: string;
  dataDir?: string;
  redis?: string;
  json?: boolean;
  reason?: string;
  note?: string;
  expires?: string;
}

export type KnowledgeAction = 'allow' | 'unallow' | 'allowlist' | 'mark' | 'unmark' | 'marks';

const AUDITED: Partial<Record<KnowledgeAction, AuditAction>> = { allow: 'allowlist_added', unallow: 'allowlist_removed', mark: 'mark_added', unmark: 'mark_removed' };

/** The author of a change made here: `cli:<account>`. */
export function cliAuthor(): string {
  return `cli:${osUser() ?? 'unknown'}`;
}

export async function knowledgeCommand(action: KnowledgeAction, args: { value?: string; verdict?: string }, options: KnowledgeOptions): Promise<number> {
  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.redis !== undefined) flags.redis_url = options.redis;
  const opened = await openKnowledge({ file: options.config, flags });
  const fields: Record<string, string | boolean> = {};
  try {
    const code = await run(opened.knowledge, action, args, options, fields);
    audit(opened.audit, action, 'success', fields);
    return code;
  } catch (error) {
    if (error instanceof KnowledgeInputError) {
      audit(opened.audit, action, 'failure', { ...fields, ...(args.value !== undefined ? { value: args.value.slice(0, 200) } : {}) }, error.message);
      throw new UsageError(error.message);
    }
    throw error;
  } finally {
    await opened.close();
  }
}

function audit(log: AuditLog, action: KnowledgeAction, outcome: 'success' | 'failure', fields: Record<string, string | boolean>, reason?: string): void {
  const kind = AUDITED[action];
  if (!kind) return;
  log.write({ action: kind, outcome, user: cliAuthor(), client: 'cli', os_user: osUser(), ...fields, ...(reason ? { reason } : {}) });
}

async function run(knowledge: TeamKnowledge, action: KnowledgeAction, args: { value?: string; verdict?: string }, options: KnowledgeOptions, fields: Record<string, string | boolean>): Promise<number> {
  const say = (line: string) => process.stderr.write(`oas: ${inertLine(line)}\n`);
  switch (action) {
    case 'allow': {
      if (options.reason === undefined) throw new UsageError('--reason is required: why the team knows it to be harmless or its own');
      const { entry, replaced } = await knowledge.allow({ value: args.value, reason: options.reason, expires: options.expires }, cliAuthor());
      Object.assign(fields, { value: entry.value, entry_reason: entry.reason, ...(entry.expires ? { expires: entry.expires } : {}), replaced });
      say(`${entry.value} ${replaced ? 'was already on the allowlist: entry replaced' : 'added to the allowlist'}${entry.expires ? `, until ${entry.expires}` : ''}; analyses no longer send it to any engine (--ignore-allowlist does)`);
      return EXIT_OK;
    }
    case 'unallow': {
      const entry = await knowledge.unallow(args.value ?? '').catch(notFound);
      fields.value = entry.value;
      say(`${entry.value} removed from the allowlist`);
      return EXIT_OK;
    }
    case 'mark': {
      if (options.note === undefined) throw new UsageError('--note is required: what the team established, for the next analyst');
      const { mark, replaced } = await knowledge.mark({ value: args.value, verdict: args.verdict, note: options.note, expires: options.expires }, cliAuthor());
      Object.assign(fields, { value: mark.value, verdict: mark.verdict, note: mark.note, ...(mark.expires ? { expires: mark.expires } : {}), replaced });
      say(`${mark.value} marked ${mark.verdict.replace('_', ' ')}${replaced ? ' (its earlier mark replaced)' : ''}${mark.expires ? ` until ${mark.expires}` : ''}; later analyses show it`);
      return EXIT_OK;
    }
    case 'unmark': {
      const mark = await knowledge.unmark(args.value ?? '').catch(notFound);
      fields.value = mark.value;
      fields.verdict = mark.verdict;
      say(`${mark.value}: mark removed`);
      return EXIT_OK;
    }
    case 'allowlist':
      return print(await knowledge.allowEntries(), options, 'the allowlist is empty: oas allow add VALUE --reason TEXT', allowRow, ['Value', 'Reason', 'By', 'Added', 'Expires']);
    case 'marks':
      return print(await knowledge.marks(), options, 'no mark yet: oas mark VALUE malicious|suspicious|clean|false_positive --note TEXT', markRow, ['Value', 'Verdict', 'Note', 'By', 'At', 'Expires']);
  }
}

/** An unknown value: the CLI's usage error (exit 2), saying where to look. */
function notFound(error: unknown): never {
  if (error instanceof KnowledgeNotFoundError) throw new UsageError(error.message);
  throw error;
}

const expiry = (item: { expires: string | null; active: boolean }) => (item.expires === null ? 'never' : item.active ? item.expires : `${item.expires} (expired)`);
const allowRow = (e: ListedEntry) => [e.value, e.reason, e.by, e.at ?? '-', expiry(e)];
const markRow = (m: StoredMark & { active: boolean }) => [m.value, m.verdict, m.note, m.by, m.at, expiry(m)];

function print<T>(items: readonly T[], options: KnowledgeOptions, empty: string, row: (item: T) => string[], heading: string[]): number {
  if (options.json) {
    process.stdout.write(`${jsonInert(JSON.stringify(items, null, 2))}\n`);
    return EXIT_OK;
  }
  if (items.length === 0) {
    process.stdout.write(`${empty}\n`);
    return EXIT_OK;
  }
  // Values and notes are data: shown inert, their control characters as escapes.
  process.stdout.write(`${inertColumns([heading, ...items.map(row)])}\n`);
  return EXIT_OK;
}
