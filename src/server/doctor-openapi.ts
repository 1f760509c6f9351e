/**
 * `POST {prefix}doctor` (src/server/doctor.ts, issue 40) as the OpenAPI document tells it: the
 * optional body the route validates with, and the report `oas doctor --json` prints
 * (src/doctor/report.ts). No Hono: `oas openapi` loads this without the server.
 */
import * as v from 'valibot';
import { errorResponse, type OpenApiContribution } from './openapi-entry.js';

export const doctorRequestSchema = v.strictObject({
  engines: v.optional(v.pipe(v.array(v.string('expected an engine id or alias')), v.minLength(1, 'expected at least one engine'), v.maxLength(500, 'expected at most 500 engines'))),
}, 'expected {"engines": [...]} (or no body)');

const checkSchema = v.object({
  kind: v.picklist(['data_dir', 'redis', 'proxy', 'dns', 'engine']),
  target: v.string(),
  service: v.optional(v.string()),
  ok: v.boolean(),
  message: v.string(),
});

export const doctorReportSchema = v.object({
  ok: v.boolean(),
  calls: v.number(),
  engines: v.number(),
  checks: v.array(checkSchema),
  lines: v.array(v.string()),
});

export const DOCTOR_OPENAPI: OpenApiContribution = {
  tags: [{ name: 'doctor', description: 'The server\'s configuration checked, as `oas doctor` does: for admins.' }],
  schemas: { DoctorRequest: doctorRequestSchema, DoctorReport: doctorReportSchema },
  entries: [
    {
      method: 'post',
      path: 'doctor',
      operationId: 'runDoctor',
      summary: 'Check the configuration: data folder, Redis, proxy, DNS servers, engines',
      description: 'The data folder (exists, private, writable), Redis when `redis_url` is set, the proxy, each DNS server (one query) and each usable engine (or those of `engines`) with one call to its upstream: a status or account endpoint where the service has one, else a lookup of a harmless value, cached nowhere. Answered as `oas doctor --json` prints it, 200 whether or not every check passed (`ok` says).',
      tags: ['doctor'],
      role: 'admin',
      requestBody: { description: 'Optional: only these engines.', content: { 'application/json': { schema: doctorRequestSchema, example: { engines: ['shodan', 'misp'] } } } },
      responses: {
        200: {
          description: 'The report: one entry per check.',
          body: {
            schema: doctorReportSchema,
            example: {
              ok: false,
              calls: 2,
              engines: 2,
              checks: [
                { kind: 'data_dir', target: '/srv/oas', ok: true, message: 'exists, private (mode 0700), writable' },
                { kind: 'engine', target: 'provider_15', service: 'misp', ok: true, message: 'MISP 2.4.190' },
                { kind: 'engine', target: 'provider_20', service: 'shodan', ok: false, message: 'HTTP 401 Unauthorized (key refused: check engines.provider_20.api_key or OAS_SHODAN_API_KEY)' },
              ],
              lines: [
                'one call per engine: 2 engines checked, 2 HTTP requests made',
                'ok    data folder /srv/oas: exists, private (mode 0700), writable',
                'ok    engine provider_15 (misp): MISP 2.4.190',
                'FAIL  engine provider_20 (shodan): HTTP 401 Unauthorized (key refused: check engines.provider_20.api_key or OAS_SHODAN_API_KEY)',
                '1 of 3 checks failed',
              ],
            },
          },
        },
        400: errorResponse('The body is not `{"engines": [...]}`, or names an unknown engine.', 'engines: unknown engine: shodn; did you mean shodan? (valid engines: ...)'),
        413: errorResponse('The body is over max_body_bytes.', 'request body larger than 1048576 bytes'),
        415: errorResponse('A body that is not `application/json`.', 'Content-Type must be application/json (a {"engines"} object)'),
      },
    },
  ],
};
