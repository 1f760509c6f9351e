/**
 * The three endpoints of the HTTP interface specification, under the configured prefix, with
 * `POST {prefix}extract` (issue 35) and `GET {prefix}openapi.json` (issue 36). Requests are
 * validated with the schemas of api-schemas.ts, which also make the OpenAPI document. Every error
 * is JSON `{"error": "..."}` saying what to fix; no stack trace ever reaches a caller.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import * as v from 'valibot';
import { jsonChunks } from '../analysis/output.js';
import { InputError, TooManyObservablesError, type AnalysisRequest, type PreparedAnalysis } from '../analysis/request.js';
import type { AnalysisService } from '../analysis/service.js';
import { ExtractionBusyError, sharedExtractionPool, type ExtractionPool } from '../observables/extract-pool.js';
import { auditedId, originOf, NO_AUDIT_REQUEST, type AuditRequest } from './audit.js';
import { createTurnBudget } from './turn-budget.js';
import { FileTooLargeError, type UploadLimits } from '../files/upload.js';
import { FileReadError, type AnalysisSource, type FileExtraction } from '../files/types.js';
import { isMultipart, readPostedForm, uploadBodyLimit, UploadError, uploadErrorResponse } from './upload.js';
import type { InternalScope } from '../marking/policy.js';
import { analyzeFormFieldsSchema, analyzeRequestSchema, extractRequestSchema, REQUIRED } from './api-schemas.js';

export interface ApiOptions {
  prefix: string;
  maxBodyBytes: number;
  analyses: AnalysisService;
  /** The answer to an unexpected error (default: a logged 500 `internal error`). */
  onError?: (error: Error, c: Context) => Response | Promise<Response>;
  /** The audit trail (analyses started, results read); none by default. */
  audit?: AuditRequest;
  /**
   * Where a request's large text is extracted: a worker thread of this pool (default: the
   * process's, src/observables/extract-pool.ts), so that this thread keeps answering meanwhile; a
   * text with more than MAX_EXTRACTION_WAIT_MS of work ahead of it is refused (503).
   */
  extractionPool?: ExtractionPool;
  /** max_upload_bytes and file_parse_timeout_ms: multipart uploads and `POST {prefix}extract` (issue 35). */
  uploads: UploadLimits;
  /** The team's own networks and domains: `POST {prefix}extract` marks their observables `internal`. */
  internalScope: InternalScope;
}

/**
 * How long a large text may wait for the extraction of those ahead of it: past that, 503 with
 * Retry-After, at once, rather than an answer many seconds later (issue 33).
 */
export const MAX_EXTRACTION_WAIT_MS = 500;

/** A body this large is checked within the turns' budget (turn-budget.ts); a smaller one at once. */
export const LARGE_BODY_CHARS = 64 * 1024;

export function createApi(options: ApiOptions): Hono {
  const { prefix, analyses } = options;
  const audit = options.audit ?? NO_AUDIT_REQUEST;
  const extract = (text: string) => (options.extractionPool ?? sharedExtractionPool()).extract(text, { maxWaitMs: MAX_EXTRACTION_WAIT_MS });
  const turns = createTurnBudget();
  const app = new Hono();

  app.onError(options.onError ?? ((error, c) => {
    process.stderr.write(`oas: internal error on ${c.req.method} ${c.req.path}: ${error.message.split('\n')[0]}\n`);
    return c.json({ error: 'internal error' }, 500);
  }));
  app.notFound((c) => c.json({ error: `not found: ${c.req.method} ${c.req.path}` }, 404));

  const jsonLimit = bodyLimit({
    maxSize: options.maxBodyBytes,
    onError: (c) => c.json({ error: `request body larger than ${options.maxBodyBytes} bytes` }, 413),
  });
  // A multipart upload is bounded by max_upload_bytes, not max_body_bytes (issue 35).
  let uploadLimit: MiddlewareHandler | undefined;
  const limited: MiddlewareHandler = async (c, next) => {
    const limit = isMultipart(c) ? (uploadLimit ??= uploadBodyLimit(options.uploads)) : jsonLimit;
    // The limit reads a chunked body itself: an upload the client cuts off (or a malformed chunk)
    // is the client's error (400), not the server's.
    let handled = false;
    try {
      return await limit(c, () => {
        handled = true;
        return next();
      });
    } catch (error) {
      if (handled) throw error;
      return c.json({ error: 'request body could not be read (the upload was cut off or malformed)' }, 400);
    }
  };

  app.post(`${prefix}extract`, limited, async (c) => {
    try {
      let extraction;
      if (isMultipart(c)) {
        const { files } = await readPostedForm(c, options.uploads);
        if (files.length > 1) return c.json({ error: 'one "file" part at a time' }, 400);
        extraction = files[0]!;
      } else {
        const type = c.req.header('content-type') ?? '';
        if (!/^application\/json\s*(;|$)/i.test(type)) return c.json({ error: 'Content-Type must be application/json (a {"text": ...} object) or multipart/form-data (a "file" part)' }, 415);
        let body: unknown;
        try {
          body = JSON.parse(await c.req.text());
        } catch {
          return c.json({ error: 'request body is not valid JSON' }, 400);
        }
        const parsed = v.safeParse(extractRequestSchema, body);
        if (!parsed.success) return c.json({ error: parsed.issues[0].message }, 400);
        const { readUpload } = await import('../files/upload.js');
        extraction = await readUpload(new TextEncoder().encode(parsed.output.text), 'text', options.uploads);
      }
      const { previewOf } = await import('../files/preview.js');
      return c.json(previewOf(extraction, options.internalScope));
    } catch (error) {
      if (error instanceof UploadError) return uploadErrorResponse(c, error);
      if (error instanceof FileReadError) return c.json({ error: error.message }, error instanceof FileTooLargeError ? 413 : 422);
      throw error;
    }
  });

  app.post(
    `${prefix}analyze`,
    limited,
    async (c) => {
      if (isMultipart(c)) return analyzeUpload(c);
      const type = c.req.header('content-type') ?? '';
      if (!/^application\/json\s*(;|$)/i.test(type)) {
        return c.json({ error: 'Content-Type must be application/json (or multipart/form-data with a "file" part)' }, 415);
      }
      let raw: string;
      try {
        raw = await c.req.text();
      } catch {
        return c.json({ error: 'request body is not valid JSON' }, 400);
      }
      // A large body is checked (parsed, its engines selected) within the turns' budget; its
      // place is given back as its text goes to extraction, or with its answer.
      const done = raw.length >= LARGE_BODY_CHARS ? await turns.enter() : undefined;
      try {
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          return c.json({ error: 'request body is not valid JSON' }, 400);
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          return c.json({ error: 'request body must be a JSON object with "text" and "engines"' }, 400);
        }
        for (const key of ['text', 'engines'] as const) {
          if (!(key in body)) return c.json({ error: REQUIRED[key] }, 400);
        }
        const parsed = v.safeParse(analyzeRequestSchema, body);
        if (!parsed.success) return c.json({ error: parsed.issues[0].message }, 400);
        const request = {
          text: parsed.output.text.trim(),
          engines: parsed.output.engines,
          ignore_cache: parsed.output.ignore_cache,
          ignore_allowlist: parsed.output.ignore_allowlist,
          tlp: parsed.output.tlp,
          pap: parsed.output.pap,
          callback_url: parsed.output.callback_url,
          started_by: c.get('oasUser')?.name,
        };
        const prepared = await analyses.prepareWith(request, (text) => {
          done?.();
          return extract(text);
        });
        return await started(c, request, prepared);
      } catch (error) {
        const answer = refusal(c, error);
        if (answer) return answer;
        throw error;
      } finally {
        done?.();
      }
    },
  );

  /**
   * `POST {prefix}analyze` as multipart/form-data: the `file` part(s) read as their formats, and as
   * form fields `engines` (comma-separated; default: the default engines), `ignore_cache`, `tlp`,
   * `pap`, `text` (more observables), `observables` (the values to keep, one per line: the web
   * form's checked ones; default all) and `callback_url`.
   */
  const analyzeUpload = async (c: Context) => {
    try {
      const { files, fields } = await readPostedForm(c, options.uploads);
      // The fields the document lists (api-schemas.ts), each a string.
      const form = v.parse(analyzeFormFieldsSchema, Object.fromEntries(fields));
      const kept = form.observables === undefined ? files : keepOnly(files, form.observables);
      const engines = form.engines?.split(',').map((s) => s.trim()).filter(Boolean);
      const request = {
        text: form.text ?? '',
        files: kept,
        engines: engines?.length ? engines : undefined,
        ignore_cache: formBoolean(form.ignore_cache),
        ignore_allowlist: formBoolean(form.ignore_allowlist),
        tlp: form.tlp || undefined,
        pap: form.pap || undefined,
        callback_url: form.callback_url || undefined,
        started_by: c.get('oasUser')?.name,
      };
      return await started(c, request, await analyses.prepareWith(request, extract));
    } catch (error) {
      const answer = refusal(c, error);
      if (answer) return answer;
      throw error;
    }
  };

  /** Records and starts a prepared analysis, writes its audit line, and answers its id and link. */
  const started = async (c: Context, request: AnalysisRequest, prepared: PreparedAnalysis) => {
    const record = await analyses.start(request, prepared);
    audit(c, { action: 'analysis_started', outcome: 'success', analysis_id: record.id, origin: originOf(c), observables: record.observables.length, engines: record.engines, tlp: record.tlp, pap: record.pap, ...fileAudit(prepared.source) });
    return c.json({ analysis_id: record.id, link: `/results/${record.id}` });
  };

  // The OpenAPI document of this prefix (issue 36, src/server/openapi.ts): built at the first
  // request, its converter loaded only then.
  let openApi: string | undefined;
  app.get(`${prefix}openapi.json`, async (c) => {
    openApi ??= JSON.stringify((await import('./openapi.js')).openApiDocument(prefix));
    c.header('Content-Type', 'application/json');
    return c.body(openApi);
  });

  // O(1): the running analyses and those seen complete are known in memory; else one field of
  // the stored header (never the results).
  app.get(`${prefix}is_analysis_complete/:id`, async (c) => {
    const complete = await analyses.isComplete(c.req.param('id'));
    if (complete === undefined) return notFound(c);
    return c.json({ complete });
  });

  // The stored rows in order, streamed: the array is never built whole.
  app.get(`${prefix}results/:id`, async (c) => {
    const record = await analyses.get(c.req.param('id'));
    const read = { action: 'results_read', analysis_id: auditedId(c.req.param('id')), origin: originOf(c), format: 'json' } as const;
    if (!record) {
      audit(c, { ...read, outcome: 'failure', reason: 'analysis not found' });
      return notFound(c);
    }
    if (!record.complete) {
      audit(c, { ...read, outcome: 'failure', reason: 'analysis not complete yet' });
      return c.json({ error: 'analysis not complete yet: poll is_analysis_complete until it reports true' }, 409);
    }
    audit(c, { ...read, outcome: 'success' });
    c.header('Content-Type', 'application/json');
    return sendChunks(c, jsonChunks(analyses.storedResults(record)));
  });

  return app;
}

/**
 * A body written a chunk at a time. A body of one chunk is sent as it is (with its length); a
 * longer one is streamed, the next chunk read only when the client has taken the previous one.
 */
export async function sendChunks(c: Context, chunks: AsyncGenerator<string | Uint8Array>): Promise<Response> {
  const first = await chunks.next();
  if (first.done) return c.body('');
  const second = await chunks.next();
  if (second.done) return c.body(typeof first.value === 'string' ? first.value : (first.value as Uint8Array<ArrayBuffer>));
  const ready = [first.value, second.value];
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const piece = ready.shift();
      if (piece !== undefined) {
        controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
        return;
      }
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(typeof next.value === 'string' ? encoder.encode(next.value) : next.value);
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  return c.body(stream);
}

/** The answer to a request that cannot start an analysis as asked (the caller's to fix, or to retry); undefined for any other error. */
function refusal(c: Context, error: unknown): Response | undefined {
  if (error instanceof UploadError) return uploadErrorResponse(c, error);
  if (error instanceof TooManyObservablesError) return c.json({ error: error.message }, 413);
  if (error instanceof ExtractionBusyError) {
    const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    return c.json({ error: `server busy: ${error.message}; retry in ${seconds} s` }, 503, { 'Retry-After': String(seconds) });
  }
  if (error instanceof InputError) return c.json({ error: error.message }, 400);
  return undefined;
}

/** A form's yes: `true`, `1`, `on`, `yes` (any case); anything else no. */
function formBoolean(value: string | undefined): boolean {
  return value !== undefined && /^(true|1|on|yes)$/i.test(value.trim());
}

/** The files' observables limited to `values` (one per line, or a JSON array of strings). */
function keepOnly(files: readonly FileExtraction[], values: string): FileExtraction[] {
  let list: unknown;
  try {
    list = values.trim().startsWith('[') ? JSON.parse(values) : values.split(/\r?\n/);
  } catch {
    list = undefined;
  }
  if (!Array.isArray(list)) throw new InputError('"observables" must be the values to analyse, one per line or a JSON array of strings');
  const wanted = new Set(list.filter((v): v is string => typeof v === 'string').map((v) => v.trim().toLowerCase()).filter(Boolean));
  return files.map((file) => ({ ...file, observables: file.observables.filter((o) => wanted.has(o.value.toLowerCase())) }));
}

/** What the audit trail keeps of an analysis's files: their extensions and total size, never names or content (the API's and /mcp's). */
export function fileAudit(source: AnalysisSource | undefined): Record<string, string | number | readonly string[]> {
  if (!source) return {};
  return { source: 'file', file_extensions: source.files.map((f) => f.ext || '(none)'), file_bytes: source.files.reduce((sum, f) => sum + f.bytes, 0) };
}

/** 404 for an unknown or malformed analysis id (`:id` in the route). */
export function notFound(c: Context) {
  return c.json({ error: `analysis not found: ${c.req.param('id')}` }, 404);
}
