/**
 * The allowlist's and the marks' endpoints (src/server/knowledge.ts, issue 38) as the OpenAPI
 * document tells them: the bodies the service checks (src/analysis/knowledge.ts) and the answers
 * it gives, as valibot schemas. No Hono: `oas openapi` loads this without the server.
 */
import * as v from 'valibot';
import { MARK_VERDICTS } from '../analysis/knowledge.js';
import { errorResponse as error, type OpenApiContribution } from './openapi-entry.js';

const EXPIRES_IN = v.pipe(v.string(), v.description('When it stops applying: a duration from now (`90s`, `10m`, `12h`, `30d`, `2w`) or an ISO 8601 time in the future. Absent: never.'));
const EXPIRES_OUT = v.pipe(v.nullable(v.string()), v.description('When it stops applying (ISO 8601); null: never.'));
const ACTIVE = v.pipe(v.boolean(), v.description('Whether it applies now (false once past its expiry).'));

export const allowInputSchema = v.pipe(
  v.strictObject({
    value: v.pipe(v.string(), v.description('An observable, a CIDR range (`10.20.0.0/16`), a domain with everything under it (`*.corp.example`: the name itself, every name under it and URLs whose host is one of them) or a file hash.')),
    reason: v.pipe(v.string(), v.description('Why the team knows it to be its own or harmless (at most 1000 characters).')),
    expires: v.optional(EXPIRES_IN),
  }),
  v.title('AllowlistInput'),
);

const entryFields = {
  value: v.pipe(v.string(), v.description('As normalised: `10.20.0.0/16`, `*.corp.example`, a lower-case hash.')),
  reason: v.string(),
  by: v.pipe(v.string(), v.description('Who added it: a user\'s name, `cli:<account>`, or `config` for an entry of the setting allowlist.')),
  at: v.optional(v.pipe(v.string(), v.description('When it was added (ISO 8601); absent for an entry of the configuration.'))),
  expires: EXPIRES_OUT,
};
export const allowEntrySchema = v.pipe(v.strictObject(entryFields), v.title('AllowlistEntry'));
export const allowEntriesSchema = v.pipe(v.array(v.strictObject({ ...entryFields, active: ACTIVE })), v.title('Allowlist'));

export const markInputSchema = v.pipe(
  v.strictObject({
    value: v.pipe(v.string(), v.description('One observable (a domain, an address, a URL, an e-mail address, a file hash).')),
    verdict: v.pipe(v.picklist(MARK_VERDICTS), v.description('`false_positive`: the engines\' verdict is shown struck through and the verdict is clean.')),
    note: v.pipe(v.string(), v.description('What the team established, for the next analyst (at most 1000 characters).')),
    expires: v.optional(EXPIRES_IN),
  }),
  v.title('MarkInput'),
);

const markFields = {
  value: v.string(),
  verdict: v.picklist(MARK_VERDICTS),
  note: v.string(),
  by: v.pipe(v.string(), v.description('Who marked it: a user\'s name, or `cli:<account>`.')),
  at: v.pipe(v.string(), v.description('When (ISO 8601).')),
  expires: EXPIRES_OUT,
};
export const markSchema = v.pipe(v.strictObject(markFields), v.title('Mark'));
export const marksSchema = v.pipe(v.array(v.strictObject({ ...markFields, active: ACTIVE })), v.title('Marks'));
export const removedSchema = v.pipe(v.strictObject({ removed: v.pipe(v.string(), v.description('The value whose entry or mark was removed.')) }), v.title('KnowledgeRemoved'));

const VALUE = { value: { description: 'The value, URL-encoded (`10.20.0.0%2F16`).', example: 'evil.example' } };
const ENTRY = { value: '*.corp.example', reason: 'our own domains', by: 'alice', at: '2026-11-20T09:00:00.000Z', expires: null };
const MARK = { value: '203.0.113.7', verdict: 'malicious', note: 'red-team C2 for exercise X', by: 'alice', at: '2026-11-20T09:00:00.000Z', expires: '2027-02-18T09:00:00.000Z' };

export const KNOWLEDGE_OPENAPI: OpenApiContribution = {
  tags: [
    { name: 'allowlist', description: 'What the team knows to be its own or harmless: sent to no engine, judged clean.' },
    { name: 'marks', description: 'Analysts\' verdicts on observables, shown as the verdict of every later analysis.' },
  ],
  schemas: { AllowlistInput: allowInputSchema, AllowlistEntry: allowEntrySchema, Allowlist: allowEntriesSchema, MarkInput: markInputSchema, Mark: markSchema, Marks: marksSchema, KnowledgeRemoved: removedSchema },
  entries: [
    {
      method: 'get', path: 'allowlist', operationId: 'listAllowlist', summary: 'The allowlist', tags: ['allowlist'], role: 'viewer',
      description: 'The configuration\'s entries (by `config`) and those added since, each with whether it applies now.',
      responses: { 200: { description: 'Every entry.', body: { schema: allowEntriesSchema, example: [{ ...ENTRY, active: true }] } } },
    },
    {
      method: 'post', path: 'allowlist', operationId: 'addAllowlistEntry', summary: 'Add an allowlist entry', tags: ['allowlist'], role: 'analyst',
      description: 'From the next analysis on, what it covers is sent to no engine (each withheld, `allowlisted: <reason>`) and judged clean, unless the analysis says `ignore_allowlist`. The caller is its author. An entry of the same value is replaced.',
      requestBody: { content: { 'application/json': { schema: allowInputSchema, example: { value: '*.corp.example', reason: 'our own domains', expires: '30d' } } } },
      responses: {
        200: { description: 'An entry of this value was replaced.', body: { schema: allowEntrySchema, example: ENTRY } },
        201: { description: 'Added.', body: { schema: allowEntrySchema, example: ENTRY } },
        400: error('Not JSON, a field missing, a value that is no observable, range, *.domain or hash, an expiry in the past, or a value of the configuration\'s allowlist.', '"*.com" is no domain pattern: write *. then a domain, such as *.corp.example'),
        413: error('The body is over max_body_bytes.', 'request body larger than 1048576 bytes'),
        415: error('The body is not `application/json`.', 'Content-Type must be application/json (a {"value", "reason", "expires"} object)'),
      },
    },
    {
      method: 'delete', path: 'allowlist/{value}', operationId: 'removeAllowlistEntry', summary: 'Remove an allowlist entry', tags: ['allowlist'], role: 'analyst', params: VALUE,
      responses: {
        200: { description: 'Removed.', body: { schema: removedSchema, example: { removed: '*.corp.example' } } },
        400: error('An entry of the configuration: remove it there.', '*.corp.example is on the allowlist of the configuration (setting allowlist): remove it there'),
        404: error('No entry has this value.', 'evil.example is not on the allowlist'),
      },
    },
    {
      method: 'get', path: 'marks', operationId: 'listMarks', summary: 'The analysts\' marks', tags: ['marks'], role: 'viewer',
      responses: { 200: { description: 'Every mark, by value, with whether it applies now.', body: { schema: marksSchema, example: [{ ...MARK, active: true }] } } },
    },
    {
      method: 'post', path: 'marks', operationId: 'addMark', summary: 'Mark an observable', tags: ['marks'], role: 'analyst',
      description: 'Every later analysis shows the mark\'s verdict ("marked malicious by alice on 2026-11-20: ..."), the engines\' kept beside it as `computed_verdict`, and the observable gains `mark`. Earlier analyses are not rewritten. A mark on the same value is replaced.',
      requestBody: { content: { 'application/json': { schema: markInputSchema, example: { value: '203.0.113.7', verdict: 'malicious', note: 'red-team C2 for exercise X', expires: '90d' } } } },
      responses: {
        200: { description: 'The mark on this value was replaced.', body: { schema: markSchema, example: MARK } },
        201: { description: 'Marked.', body: { schema: markSchema, example: MARK } },
        400: error('Not JSON, a field missing, a verdict not among malicious, suspicious, clean, false_positive, a range or pattern, or an expiry in the past.', '"verdict" must be one of malicious, suspicious, clean, false_positive'),
        413: error('The body is over max_body_bytes.', 'request body larger than 1048576 bytes'),
        415: error('The body is not `application/json`.', 'Content-Type must be application/json (a {"value", "verdict", "note", "expires"} object)'),
      },
    },
    {
      method: 'delete', path: 'marks/{value}', operationId: 'removeMark', summary: 'Remove the mark on an observable', tags: ['marks'], role: 'analyst', params: VALUE,
      responses: {
        200: { description: 'Removed.', body: { schema: removedSchema, example: { removed: '203.0.113.7' } } },
        404: error('No mark on this value.', 'evil.example has no mark'),
      },
    },
  ],
};
