/**
 * The bodies of the API under the prefix (src/server/api.ts), as valibot schemas: the requests the
 * routes validate with, and the answers they give. The same schemas make the OpenAPI document
 * (src/server/openapi.ts, issue 36), so the document cannot drift from what the server checks.
 * The answers' objects are strict (no key but those listed): the tests check the server's real
 * answers against the document, and a key added to an answer fails them until it is listed here. Valibot only: `oas openapi` imports this
 * module without the server (no Hono, no storage).
 */
import * as v from 'valibot';
import { FILE_KINDS } from '../files/types.js';
import type { ExtractionPreview } from '../files/preview.js';
import { OBSERVABLE_TYPES } from '../observables/types.js';
import type { ObservableResult } from '../runner/result.js';

/** A non-blank string: a pattern, so the document says it too (JSON Schema has no trim). */
const NOT_BLANK = /\S/;

/** What `POST {prefix}analyze` answers when `text` or `engines` is missing. */
export const REQUIRED = {
  text: '"text" is required and must be a string holding the observables to analyse',
  engines: '"engines" is required and must be an array of engine names',
};

/** `POST {prefix}analyze` as JSON (the spec's "Analysis request", with TLP and PAP of issue 34). */
export const analyzeRequestSchema = v.pipe(
  v.object({
    text: v.pipe(
      v.string(REQUIRED.text),
      v.regex(NOT_BLANK, '"text" must not be empty: give a domain, IP address, URL, hash or e-mail address'),
      v.description('The text holding the observables to analyse (domains, IPs, URLs, hashes, e-mail addresses), defanged or not.'),
    ),
    engines: v.pipe(
      v.array(v.string('"engines" must be an array of engine names (strings)'), REQUIRED.engines),
      v.minLength(1, '"engines" must name at least one engine'),
      v.description('Engine ids or aliases, and `@name` for an engine set of the configuration (setting engine_sets).'),
    ),
    ignore_cache: v.optional(v.pipe(v.boolean('"ignore_cache" must be true or false'), v.description('Ask every engine again instead of using cached results.'))),
    ignore_allowlist: v.optional(v.pipe(v.boolean('"ignore_allowlist" must be true or false'), v.description('Analyse even the observables the allowlist covers (setting allowlist), instead of judging them clean unasked.'))),
    // Read by the analysis (issue 34): a word that is no level is refused there, naming the levels.
    tlp: v.optional(v.pipe(v.string('"tlp" must be a string: CLEAR, GREEN, AMBER, AMBER+STRICT or RED'), v.description('Who may receive what the analysis holds: CLEAR, GREEN, AMBER, AMBER+STRICT or RED (default: setting default_tlp). An engine gets the observables only up to its max_tlp.'))),
    pap: v.optional(v.pipe(v.string('"pap" must be a string: CLEAR, GREEN, AMBER or RED'), v.description('What may be done with it: CLEAR, GREEN, AMBER or RED (default: setting default_pap).'))),
    // Checked by the analysis (issue 36): a host off the setting callback_hosts is a 400 naming it.
    callback_url: v.optional(v.pipe(v.string('"callback_url" must be a URL string such as https://soar.example.org/hooks/oas'), v.description('Where the analysis.completed event also goes, signed (Standard Webhooks) with the secret of setting callback_secret_env: an http(s) URL on a host of setting callback_hosts (else 400).'))),
  }),
  v.title('AnalyzeRequest'),
);

/** The text fields of a multipart `POST {prefix}analyze`, each as the form sends it: a string. */
export const analyzeFormFieldsSchema = v.object({
  engines: v.optional(v.pipe(v.string(), v.description('Comma-separated engine ids, aliases or `@sets` (default: the default engines).'))),
  ignore_cache: v.optional(v.pipe(v.string(), v.description('`true`, `1`, `on` or `yes` (any case) to ask every engine again; anything else no.'))),
  ignore_allowlist: v.optional(v.pipe(v.string(), v.description('`true`, `1`, `on` or `yes` (any case) to analyse even what the allowlist covers; anything else no.'))),
  tlp: v.optional(v.pipe(v.string(), v.description('As in the JSON request.'))),
  pap: v.optional(v.pipe(v.string(), v.description('As in the JSON request.'))),
  text: v.optional(v.pipe(v.string(), v.description('More observables, analysed with the files\'.'))),
  observables: v.optional(v.pipe(v.string(), v.description('The values to keep, one per line or a JSON array of strings (the web form\'s checked ones); default every observable of the files.'))),
  column: v.optional(v.pipe(v.string(), v.description('For a CSV/TSV file: the columns to read, comma-separated; default every cell.'))),
  callback_url: v.optional(v.pipe(v.string(), v.description('As in the JSON request.'))),
});

/** A file part of a form: bytes (`contentMediaType` in the document, see src/server/openapi.ts). */
const filePart = v.pipe(v.file(), v.description('A file: an e-mail (.eml, .msg), a PDF, a CSV/TSV, JSON or any text, at most max_upload_bytes.'));

/** `POST {prefix}analyze` as multipart/form-data: one or more `file` parts and the fields. */
export const analyzeFormSchema = v.pipe(
  v.object({
    file: v.pipe(v.array(filePart), v.minLength(1), v.description('One or more `file` parts, each read as its format; their observables are analysed with `text`\'s.')),
    ...analyzeFormFieldsSchema.entries,
  }),
  v.title('AnalyzeForm'),
);

const EXTRACT_TEXT = '"text" is required and must be a non-empty string (or send a file as multipart/form-data field "file")';

/** `POST {prefix}extract` as JSON: a text read as a file would be. */
export const extractRequestSchema = v.pipe(
  v.object({
    text: v.pipe(v.string(EXTRACT_TEXT), v.regex(NOT_BLANK, EXTRACT_TEXT), v.description('The text whose observables to list.')),
  }, EXTRACT_TEXT),
  v.title('ExtractRequest'),
);

/** The text fields of a multipart `POST {prefix}extract`. */
export const extractFormFieldsSchema = v.object({
  column: analyzeFormFieldsSchema.entries.column,
});

/** `POST {prefix}extract` as multipart/form-data: exactly one `file` part. */
export const extractFormSchema = v.pipe(
  v.object({ file: filePart, ...extractFormFieldsSchema.entries }),
  v.title('ExtractForm'),
);

/** The answer to a started analysis (the spec's "Analysis handle"). */
export const analysisHandleSchema = v.pipe(
  v.strictObject({
    analysis_id: v.pipe(v.string(), v.uuid(), v.description('The analysis\'s id (a UUID).')),
    link: v.pipe(v.string(), v.regex(/^\/results\/[0-9a-f-]+$/), v.description('The results page of the analysis: `/results/<analysis_id>`.')),
  }),
  v.title('AnalysisHandle'),
);

/** `GET {prefix}is_analysis_complete/{id}` (the spec's "Completion status"). */
export const completionSchema = v.pipe(
  v.strictObject({ complete: v.pipe(v.boolean(), v.description('true once the analysis has finished: its results can be read.')) }),
  v.title('CompletionStatus'),
);

const observableType = v.pipe(v.picklist(OBSERVABLE_TYPES), v.description('The kind of observable: a domain name is FQDN.'));
const foundIn = v.pipe(v.array(v.string()), v.description('Where it was found in the file(s) it came from (`Received header 2`, `row 14, column ip`), in order.'));
const engineLines = (what: string) => v.pipe(v.record(v.string(), v.string()), v.description(what));

/** The keys of a result element that are no engine's (RESERVED_KEYS of src/runner/result.ts). */
const resultEntries = {
  observable: v.pipe(v.string(), v.description('The observable analysed (refanged).')),
  type: observableType,
  found_in: v.optional(foundIn),
  reversed_success: v.pipe(v.boolean(), v.description('true when the observable was resolved to at least one address or name during this analysis.')),
  reversed_ip: v.optional(v.pipe(v.string(), v.description('The IP that IP-only engines ran on for a domain or URL, when they did.'))),
  errors: v.optional(engineLines('Engine key -> one line saying why that engine failed; absent when none failed.')),
  withheld: v.optional(engineLines('Engine key -> one line saying why that engine was not sent the observable (its TLP/PAP ceiling, the team\'s own networks or domains, the allowlist); its key is null. Absent when none was.')),
  allowlisted: v.optional(v.pipe(
    v.strictObject({
      value: v.pipe(v.string(), v.description('The entry: the observable, a CIDR range, `*.domain` or a hash.')),
      reason: v.string(),
      by: v.pipe(v.string(), v.description('Who added it (`config` for the setting allowlist).')),
      expires: v.optional(v.pipe(v.string(), v.description('When it stops applying (ISO 8601).'))),
    }),
    v.description('The allowlist\'s entry that covers the observable (setting allowlist): no engine was sent it and its verdict is clean. Absent otherwise, or with ignore_allowlist.'),
  )),
  mark: v.optional(v.pipe(
    v.strictObject({
      verdict: v.picklist(['malicious', 'suspicious', 'clean', 'false_positive']),
      note: v.string(),
      by: v.pipe(v.string(), v.description('Who marked it: a user\'s name, or `cli:<account>`.')),
      at: v.pipe(v.string(), v.description('When (ISO 8601).')),
      expires: v.pipe(v.nullable(v.string()), v.description('When it stops applying (ISO 8601); null: never.')),
    }),
    v.description('The analyst\'s mark on the observable when it was analysed (POST {prefix}marks, oas mark): its verdict is the observable\'s (false_positive: clean), the engines\' kept as computed_verdict. Absent when none applied.'),
  )),
  seen: v.optional(v.pipe(
    v.nullable(v.strictObject({
      count: v.pipe(v.number(), v.integer(), v.minValue(1), v.description('How many earlier analyses of this store held it.')),
      first: v.pipe(v.string(), v.description('When the first of them began (ISO 8601).')),
      last: v.pipe(v.string(), v.description('When the last of them began (ISO 8601).')),
      last_verdict: v.pipe(v.string(), v.description('Its verdict in the last of them.')),
      last_analysis_id: v.pipe(v.string(), v.description('The last of them: its results at GET {prefix}results/<id>.')),
    })),
    v.description('The earlier analyses of this store that held the observable (everyone\'s), as this analysis began; null when none did (GET /ui/observables/<value> and oas history VALUE list them). Absent in results of older versions.'),
  )),
};

/** One element of `GET {prefix}results/{id}` (the spec's "Analysis result"): its own keys, then one per engine. */
export const observableResultSchema = v.pipe(
  v.objectWithRest(
    resultEntries,
    v.pipe(
      v.nullable(v.record(v.string(), v.unknown())),
      v.description('One key per selected engine, named as the request named it: the engine\'s result object, or null when it has nothing to report, failed (see errors) or was withheld.'),
    ),
  ),
  v.title('ObservableResult'),
);

/** `GET {prefix}results/{id}`: one element per observable, in order. */
export const resultsSchema = v.pipe(v.array(observableResultSchema), v.title('AnalysisResults'));

/** Every error of the API: one line saying what to fix. */
export const errorSchema = v.pipe(
  v.strictObject({ error: v.pipe(v.string(), v.description('What went wrong and what to fix, in one line.')) }),
  v.title('Error'),
);

/** `POST {prefix}extract`: a file's (or text's) observables, asking no engine (src/files/preview.ts). */
export const extractionPreviewSchema = v.pipe(
  v.strictObject({
    file: v.pipe(
      v.strictObject({
        name: v.pipe(v.string(), v.description('The file\'s name as given (`text` for a JSON text).')),
        kind: v.pipe(v.picklist(FILE_KINDS), v.description('The format it was read as.')),
        bytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
      }),
      v.description('The file as given; never its content.'),
    ),
    observables: v.array(v.strictObject({
      value: v.string(),
  type: observableType,
      found_in: foundIn,
      internal: v.optional(v.pipe(v.string(), v.description('Why it is the team\'s own (settings internal_networks, internal_domains): an analysis sends it to no third party.'))),
    })),
    email_auth: v.optional(v.pipe(
      v.strictObject({
        spf: v.optional(v.string()),
        dkim: v.optional(v.string()),
        dmarc: v.optional(v.string()),
        authserv_id: v.optional(v.pipe(v.string(), v.description('The receiving system that wrote the Authentication-Results header read.'))),
      }),
      v.description('An e-mail\'s SPF, DKIM and DMARC outcomes (`pass`, `fail`, `softfail`, `none`...), from its topmost Authentication-Results header.'),
    )),
    notes: v.pipe(v.array(v.string()), v.description('What the reader could not read but went on without.')),
  }),
  v.title('ExtractionPreview'),
);

/** `GET {prefix}openapi.json`: an OpenAPI 3.1 document (its own schema is the specification's). */
export const openApiDocumentSchema = v.pipe(
  v.looseObject({ openapi: v.string(), info: v.looseObject({ title: v.string(), version: v.string() }), paths: v.record(v.string(), v.unknown()) }),
  v.title('OpenApiDocument'),
);

// The answers' schemas say what the code's types say: a change to either fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agreed = <T extends true>(value: T): T => value;
agreed<Same<v.InferOutput<typeof extractionPreviewSchema>, ExtractionPreview>>(true);
agreed<Same<v.InferOutput<v.ObjectSchema<typeof resultEntries, undefined>>, Pick<ObservableResult, keyof typeof resultEntries>>>(true);
