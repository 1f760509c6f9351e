/**
 * `POST {prefix}analyses/<id>/push` (issue 37): push an analysis into a platform of the team with
 * `{ "target", "event_id"?, "case_id"?, "min_verdict"?, "all"? }` (src/push/request.ts), an
 * analyst's or admin's (auth.ts `roleFor`). It answers what was created or found, with counts and
 * one line (200); a refused push (bad body 400, TLP above the target's max_tlp 403, unknown
 * analysis 404, one still running 409) or a platform that failed (502) is `{"error": "..."}` in
 * one line naming the target, what failed and what to check. Each push is an audit line
 * (`results_pushed`: target, analysis, counts; never an observable).
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { PushServices } from '../push/service.js';
import { pushRequestSchema } from '../push/request.js';
import { jsonBody, validBody } from './json-body.js';
import { auditedId, originOf, NO_AUDIT_REQUEST, type AuditRequest } from './audit.js';

export interface PushApiOptions {
  prefix: string;
  maxBodyBytes: number;
  /** What a push reads, as of now (a reload replaces the configuration and catalog). */
  services: () => PushServices;
  audit?: AuditRequest;
}

export function createPushApi(options: PushApiOptions): Hono {
  const audit = options.audit ?? NO_AUDIT_REQUEST;
  const app = new Hono();
  const limit = bodyLimit({ maxSize: options.maxBodyBytes, onError: (c) => c.json({ error: `request body larger than ${options.maxBodyBytes} bytes` }, 413) });

  app.post(`${options.prefix}analyses/:id/push`, limit, async (c) => {
    c.header('Cache-Control', 'no-store');
    const id = c.req.param('id');
    const fields = (target: string | undefined) => ({ origin: originOf(c), target, analysis_id: auditedId(id) });
    const read = await jsonBody(c, '{"target", "event_id", "case_id", "min_verdict", "all"}');
    if (read instanceof Response) return read;
    const request = validBody(c, pushRequestSchema, read.body);
    if (request instanceof Response) return request;
    const { pushAnalysis, PushRefusedError } = await import('../push/service.js');
    const { PushError } = await import('../push/types.js');
    const { reportJson } = await import('../push/report.js');
    try {
      const report = await pushAnalysis(options.services(), { target: request.target, analysisId: id, event_id: request.event_id, case_id: request.case_id, min_verdict: request.min_verdict, all: request.all });
      audit(c, { action: 'results_pushed', outcome: 'success', ...fields(request.target), kind: report.outcome.kind, id: report.outcome.id, created: report.outcome.created, added: report.outcome.added, existing: report.outcome.existing, selected: report.selected, withheld: report.withheld });
      return c.json(reportJson(report));
    } catch (error) {
      if (error instanceof PushRefusedError || error instanceof PushError) {
        audit(c, { action: 'results_pushed', outcome: 'failure', ...fields(request.target), reason: error.message });
        return c.json({ error: error.message }, error instanceof PushRefusedError ? error.status : 502);
      }
      throw error;
    }
  });

  return app;
}
