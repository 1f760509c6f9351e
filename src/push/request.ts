/**
 * What a push request holds (issue 37), as `POST {prefix}analyses/<id>/push` and the MCP tool
 * `push_results` take it: `{ "target", "event_id"?, "case_id"?, "min_verdict"?, "all"? }`. The API
 * validates with this schema and its OpenAPI document is made from it.
 */
import * as v from 'valibot';
import { VERDICTS } from '../verdict/verdict.js';
import { PUSH_TARGETS } from './types.js';

const ID = /^[A-Za-z0-9_~:.-]{1,64}$/;
const ID_MESSAGE = 'expected an id of the platform: 1 to 64 letters, digits and - _ ~ : .';

export const pushRequestSchema = v.pipe(
  v.strictObject(
    {
      target: v.pipe(v.picklist(PUSH_TARGETS, `"target" must be one of ${PUSH_TARGETS.join(', ')}`), v.description('The platform: `misp`, `opencti` or `thehive` (configured in the setting `push`).')),
      event_id: v.optional(v.pipe(v.string(ID_MESSAGE), v.regex(ID, ID_MESSAGE), v.description('MISP only: add the attributes to this existing event instead of making one.'))),
      case_id: v.optional(v.pipe(v.string(ID_MESSAGE), v.regex(ID, ID_MESSAGE), v.description('TheHive only: add the observables to this case instead of making an alert.'))),
      min_verdict: v.optional(v.pipe(v.picklist(VERDICTS, `"min_verdict" must be one of ${VERDICTS.join(', ')}`), v.description('Push the observables at least this severe (default `suspicious`).'))),
      all: v.optional(v.pipe(v.boolean('"all" must be true or false'), v.description('Push every observable, whatever its verdict.'))),
    },
    'expected a JSON object { "target", "event_id", "case_id", "min_verdict", "all" } and no other field',
  ),
  v.title('PushRequest'),
);
export type PushRequestBody = v.InferOutput<typeof pushRequestSchema>;

/** The answer of a push: what was created or found, with counts, and one line saying it. */
export const pushAnswerSchema = v.pipe(
  v.strictObject({
    target: v.picklist(PUSH_TARGETS),
    kind: v.pipe(v.picklist(['event', 'alert', 'case', 'observables']), v.description('What holds the pushed observables: a MISP event, a TheHive alert or case, OpenCTI observables.')),
    id: v.pipe(v.string(), v.description('The event\'s, alert\'s or case\'s id in the platform (empty for OpenCTI).')),
    link: v.optional(v.pipe(v.string(), v.description('Its page in the platform.'))),
    created: v.pipe(v.boolean(), v.description('True when this push made the event or alert; false when it found what an earlier push made, or was given an event or case.')),
    added: v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Attributes or observables this push added.')),
    existing: v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Those already there, not added again.')),
    indicators: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description('OpenCTI: indicators made or found for the malicious observables.'))),
    selected: v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Observables selected (at or above min_verdict) and sent.')),
    withheld: v.pipe(v.number(), v.integer(), v.minValue(0), v.description('The team\'s own observables (TLP:RED) left out because the target\'s max_tlp is lower.')),
    message: v.pipe(v.string(), v.description('All of it in one line.')),
  }),
  v.title('PushResult'),
);
