/**
 * `oas push misp|opencti|thehive ANALYSIS_ID [--event ID|--case ID] [--all] [--min-verdict V]`
 * (issue 37): an analysis, read where the team's analyses are (the SQLite file of data_dir, or
 * Redis with redis_url), pushed into a platform; one line says what was created (`--json`: the
 * same as an object). A refused push (bad input, an unknown analysis, a TLP above the target's
 * max_tlp, a target not configured) is exit 2, a target that failed exit 1, each one line naming
 * the target, what failed and what to check. Also run by `oas analyze --push TARGET` once its
 * analysis is done (`pushAfterAnalysis`).
 */
import type { App } from '../app.js';
import type { Config } from '../config/schema.js';
import { openAuditLog, osUser, type AuditLog } from '../fs/audit-log.js';
import type { PushReport } from '../push/service.js';
import { reportJson, sentence } from '../push/report.js';
import { inertLine, jsonInert } from '../text/inert.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, oneLine } from './errors.js';
import { withTeamApp } from './team-app.js';

export interface PushCommandOptions {
  config?: string;
  dataDir?: string;
  redis?: string;
  event?: string;
  case?: string;
  all?: boolean;
  minVerdict?: string;
  json?: boolean;
}

export async function pushCommand(target: string, analysisId: string, options: PushCommandOptions): Promise<number> {
  // The analysis is read where the servers keep theirs.
  return withTeamApp(options, (app) => pushAndSay(app, { target, analysisId, event_id: options.event, case_id: options.case, min_verdict: options.minVerdict, all: options.all }, options.json === true));
}

/** `oas analyze --push TARGET`: the analysis just done, pushed; its line on standard error (standard output holds the results). */
export async function pushAfterAnalysis(app: App, target: string, analysisId: string): Promise<number> {
  return pushAndSay(app, { target, analysisId }, false, process.stderr);
}

async function pushAndSay(
  app: App,
  request: Parameters<typeof import('../push/service.js').pushAnalysis>[1],
  json: boolean,
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const { pushAnalysis, PushRefusedError } = await import('../push/service.js');
  const { PushError } = await import('../push/types.js');
  const audit = auditOf(app.config);
  try {
    const report = await pushAnalysis({ config: app.config, catalog: app.catalog, transport: app.transport, analyses: app.analyses }, request);
    audited(audit, request.target, request.analysisId, 'success', report);
    out.write(json ? `${jsonInert(JSON.stringify(reportJson(report)))}\n` : `${inertLine(sentence(report))}\n`);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof PushRefusedError || error instanceof PushError) {
      audited(audit, request.target, request.analysisId, 'failure', undefined, error.message);
      process.stderr.write(`oas: push: ${inertLine(oneLine(error.message))}\n`);
      return error instanceof PushRefusedError ? EXIT_USAGE : EXIT_FAILED;
    }
    throw error;
  }
}

/** The audit trail of the configuration's audit_log, as `oas users` opens it. */
function auditOf(config: Config): AuditLog {
  return openAuditLog(config.audit_log, { prepare: false });
}

/** `results_pushed`: the target, the analysis, the counts; never an observable. */
function audited(log: AuditLog, target: string, analysisId: string, outcome: 'success' | 'failure', report?: PushReport, reason?: string): void {
  log.write({
    action: 'results_pushed',
    outcome,
    user: null,
    client: 'cli',
    os_user: osUser(),
    target: target.slice(0, 20),
    analysis_id: /^[0-9a-f-]{36}$/i.test(analysisId) ? analysisId : undefined,
    ...(report ? { kind: report.outcome.kind, id: report.outcome.id, created: report.outcome.created, added: report.outcome.added, existing: report.outcome.existing, selected: report.selected, withheld: report.withheld } : {}),
    reason,
  });
}
