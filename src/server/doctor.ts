/**
 * `POST {prefix}doctor` (issue 40): `oas doctor` for the admin (auth.ts `roleFor`; others get 403
 * naming their role): the server's configuration checked as it runs, through its own HTTP client,
 * answered as `oas doctor --json` prints it (200 whether or not every check passed: `ok` says).
 * An optional JSON body `{"engines": ["shodan", ...]}` checks only those engines (an unknown one:
 * 400).
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { App } from '../app.js';
import { UnknownEngineError, UnknownEngineSetError } from '../engine/catalog.js';
import { NO_AUDIT_REQUEST, originOf, type AuditRequest } from './audit.js';
import { jsonBody, validBody } from './json-body.js';
import { doctorRequestSchema } from './doctor-openapi.js';

export interface DoctorApiOptions {
  prefix: string;
  maxBodyBytes: number;
  app: Pick<App, 'config' | 'catalog' | 'transport'>;
  /** `doctor_run`: an admin's check sends a call to each engine's upstream. */
  audit?: AuditRequest;
}

export function createDoctorApi(options: DoctorApiOptions): Hono {
  const api = new Hono();
  const limit = bodyLimit({ maxSize: options.maxBodyBytes, onError: (c) => c.json({ error: `request body larger than ${options.maxBodyBytes} bytes` }, 413) });
  api.post(`${options.prefix}doctor`, limit, async (c) => {
    c.header('Cache-Control', 'no-store');
    let engines: string[] | undefined;
    // A body is optional: none checks every usable engine.
    if (c.req.header('content-type') !== undefined) {
      const read = await jsonBody(c, '{"engines"}');
      if (read instanceof Response) return read;
      const asked = validBody(c, doctorRequestSchema, read.body);
      if (asked instanceof Response) return asked;
      engines = asked.engines;
    }
    const { runDoctor } = await import('../doctor/run.js');
    const { app } = options;
    const audit = options.audit ?? NO_AUDIT_REQUEST;
    try {
      const report = await runDoctor({ config: app.config, catalog: app.catalog, transport: app.transport, engines });
      const failed = report.checks.filter((check) => !check.ok);
      audit(c, { action: 'doctor_run', outcome: 'success', origin: originOf(c), engines: report.engines, calls: report.calls, failed: failed.map((check) => check.target) });
      return c.json(report);
    } catch (error) {
      if (error instanceof UnknownEngineError || error instanceof UnknownEngineSetError) {
        audit(c, { action: 'doctor_run', outcome: 'failure', origin: originOf(c), reason: `engines: ${error.message}` });
        return c.json({ error: `engines: ${error.message}` }, 400);
      }
      throw error;
    }
  });
  return api;
}
