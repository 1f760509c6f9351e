/**
 * The three endpoints of the HTTP interface specification, under the configured prefix. Every error is JSON `{"error": "..."}` saying what
 * to fix; no stack trace ever reaches a caller.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import * as v from 'valibot';
import { jsonChunks } from '../analysis/output.js';
import { InputError, TooManyObservablesError } from '../analysis/request.js';
import type { AnalysisService } from '../analysis/service.js';
import { ExtractionBusyError, sharedExtractionPool, type ExtractionPool } from '../observables/extract-pool.js';
import { auditedId, originOf, NO_AUDIT_REQUEST, type AuditRequest } from './audit.js';
import { createTurnBudget } from './turn-budget.js';

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
}

/**
 * How long a large text may wait for the extraction of those ahead of it: past that, 503 with
 * Retry-After, at once, rather than an answer many seconds later (issue 33).
 */
export const MAX_EXTRACTION_WAIT_MS = 500;

/** A body this large is checked within the turns' budget (turn-budget.ts); a smaller one at once. */
export const LARGE_BODY_CHARS = 64 * 1024;

const REQUIRED = {
  text: '"text" is required and must be a string holding the observables to analyse',
  engines: '"engines" is required and must be an array of engine names',
};

const requestSchema = v.object({
  text: v.pipe(
    v.string(REQUIRED.text),
    v.trim(),
    v.minLength(1, '"text" must not be empty: give a domain, IP address, URL, hash or e-mail address'),
  ),
  engines: v.pipe(
    v.array(v.string('"engines" must be an array of engine names (strings)'), REQUIRED.engines),
    v.minLength(1, '"engines" must name at least one engine'),
  ),
  ignore_cache: v.optional(v.boolean('"ignore_cache" must be true or false')),
  // Read by the analysis (issue 34): a word that is no level is refused there, naming the levels.
  tlp: v.optional(v.string('"tlp" must be a string: CLEAR, GREEN, AMBER, AMBER+STRICT or RED')),
  pap: v.optional(v.string('"pap" must be a string: CLEAR, GREEN, AMBER or RED')),
});

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

  const limit = bodyLimit({
    maxSize: options.maxBodyBytes,
    onError: (c) => c.json({ error: `request body larger than ${options.maxBodyBytes} bytes` }, 413),
  });
  app.post(
    `${prefix}analyze`,
    // The limit reads a chunked body itself: an upload the client cuts off (or a malformed chunk)
    // is the client's error (400), not the server's.
    async (c, next) => {
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
    },
    async (c) => {
      const type = c.req.header('content-type') ?? '';
      if (!/^application\/json\s*(;|$)/i.test(type)) {
        return c.json({ error: 'Content-Type must be application/json' }, 415);
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
        const parsed = v.safeParse(requestSchema, body);
        if (!parsed.success) return c.json({ error: parsed.issues[0].message }, 400);
        const request = {
          text: parsed.output.text,
          engines: parsed.output.engines,
          ignore_cache: parsed.output.ignore_cache,
          tlp: parsed.output.tlp,
          pap: parsed.output.pap,
          started_by: c.get('oasUser')?.name,
        };
        const prepared = await analyses.prepareWith(request, (text) => {
          done?.();
          return extract(text);
        });
        const record = await analyses.start(request, prepared);
        audit(c, { action: 'analysis_started', outcome: 'success', analysis_id: record.id, origin: originOf(c), observables: record.observables.length, engines: record.engines, tlp: record.tlp, pap: record.pap });
        return c.json({ analysis_id: record.id, link: `/results/${record.id}` });
      } catch (error) {
        if (error instanceof TooManyObservablesError) return c.json({ error: error.message }, 413);
        if (error instanceof ExtractionBusyError) {
          const seconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
          return c.json({ error: `server busy: ${error.message}; retry in ${seconds} s` }, 503, { 'Retry-After': String(seconds) });
        }
        if (error instanceof InputError) return c.json({ error: error.message }, 400);
        throw error;
      } finally {
        done?.();
      }
    },
  );

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

/** 404 for an unknown or malformed analysis id (`:id` in the route). */
export function notFound(c: Context) {
  return c.json({ error: `analysis not found: ${c.req.param('id')}` }, 404);
}
