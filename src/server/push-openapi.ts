/**
 * `POST {prefix}analyses/<id>/push` (src/server/push.ts, issue 37) as the OpenAPI document tells
 * it: the body is the schema the route validates with, the answer the one it writes
 * (src/push/request.ts). No Hono: `oas openapi` loads this without the server.
 */
import { pushAnswerSchema, pushRequestSchema } from '../push/request.js';
import { errorResponse as error, type OpenApiContribution } from './openapi-entry.js';

const ANALYSIS_ID = '0b9b8f5e-3c1e-4c5e-9a57-2f6f3e1d2c4b';

export const PUSH_OPENAPI: OpenApiContribution = {
  tags: [{ name: 'push', description: 'An analysis sent into a platform of the team: a MISP event, OpenCTI observables and indicators, a TheHive alert or case observables.' }],
  schemas: { PushRequest: pushRequestSchema, PushResult: pushAnswerSchema },
  entries: [
    {
      method: 'post',
      path: 'analyses/{id}/push',
      operationId: 'pushAnalysis',
      summary: 'Push an analysis to MISP, OpenCTI or TheHive',
      description: 'The observables at or above `min_verdict` (default suspicious; `all` for every one), each with its verdict, reasons, the engines\' summaries, a link back and the analysis\'s TLP and PAP. Pushing the same analysis again adds only what is missing.',
      tags: ['push'],
      role: 'analyst',
      params: { id: { description: 'The analysis\'s id.', example: ANALYSIS_ID } },
      requestBody: { content: { 'application/json': { schema: pushRequestSchema, example: { target: 'misp', min_verdict: 'suspicious' } } } },
      responses: {
        200: {
          description: 'Pushed: what was created or found.',
          body: {
            schema: pushAnswerSchema,
            example: { target: 'misp', kind: 'event', id: '42', link: 'https://misp.example.org/events/view/42', created: true, added: 3, existing: 0, selected: 3, withheld: 0, message: 'MISP event 42 created: 3 attributes added (https://misp.example.org/events/view/42)' },
          },
        },
        400: error('Not JSON, a field unknown or invalid, event_id for another target than MISP, case_id for another than TheHive, or the target not configured.', 'TheHive is not configured as a push target: set push.thehive.url and push.thehive.api_key or OAS_PUSH_THEHIVE_API_KEY'),
        403: error('The analysis\'s TLP is above the target\'s max_tlp: nothing is sent.', `analysis ${ANALYSIS_ID} is TLP:RED, above what MISP may receive (push.misp.max_tlp is AMBER): nothing sent`),
        404: error('No analysis has this id.', 'analysis 0b9b8f5e-0000-0000-0000-000000000000 not found'),
        409: error('The analysis is still running.', `analysis ${ANALYSIS_ID} is not complete yet: push it once it is`),
        413: error('The body is over max_body_bytes.', 'request body larger than 1048576 bytes'),
        415: error('The body is not `application/json`.', 'Content-Type must be application/json (a {"target", "event_id", "case_id", "min_verdict", "all"} object)'),
        502: error('The platform refused or failed: one line naming it, what failed and what to check.', 'MISP at misp.example.org: HTTP 403 Forbidden: Authentication failed (key refused: check push.misp.api_key or OAS_PUSH_MISP_API_KEY)'),
      },
    },
  ],
};
