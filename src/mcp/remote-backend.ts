/**
 * The MCP tools on another server (`oas mcp --server URL`): an oas server, or a Cyberbro one,
 * through its three endpoints, like `oas analyze --server`. The verdicts and engine lines are made
 * here with the local catalog (and the local configuration's custom engines), as that command does.
 * A tool's file (issue 35) goes to an oas server as its API takes one, a multipart `POST
 * {prefix}analyze`, and is read there; a Cyberbro server takes no file, so none is sent to it.
 * A push (issue 37, `push_results`) is the server's `POST {prefix}analyses/<id>/push`, made there
 * with its settings, keys and audit trail; a Cyberbro server has no such endpoint: a tool error.
 */
import * as v from 'valibot';
import { normalizeResult, RemoteClient, RemoteError, unmarkedServerRefusal, type RemoteTarget } from '../cli/remote.js';
import { MarkingError, parseMarking, type Pap, type Tlp } from '../marking/levels.js';
import { UsageError } from '../cli/errors.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { CatalogView } from '../view/types.js';
import { redact } from '../http/redact.js';
import { pushAnswerSchema } from '../push/request.js';
import { inertLine } from '../text/inert.js';
import { entryOf, localListing } from './local-backend.js';
import { ToolError, type McpBackend, type PushAnswer, type PushToolRequest, type ToolFile } from './backend.js';

/** Each call to the server gets this long (an analysis's wait is the tool's, polling between calls). */
const CALL_TIMEOUT_MS = 30_000;
/** A push may take the server this long (its own bound on a whole push, src/push/service.ts). */
const PUSH_TIMEOUT_MS = 10 * 60_000;
/** How much of a server's line is repeated. */
const LINE_MAX = 2000;

export function remoteBackend(target: RemoteTarget, token: string | undefined, local: { catalog: Catalog; config: Config }): McpBackend {
  const withClient = async <T>(work: (client: RemoteClient) => Promise<T>): Promise<T> => {
    const client = new RemoteClient(target, token, CALL_TIMEOUT_MS);
    try {
      return await work(client);
    } catch (error) {
      if (error instanceof RemoteError || error instanceof UsageError) throw new ToolError(error.message);
      throw error;
    } finally {
      client.close();
    }
  };
  return {
    catalog: local.catalog,
    start: (request) => withClient(async (client) => {
      // A set the local configuration defines is expanded here (a Cyberbro server knows none).
      const engines = request.engines === undefined
        ? local.catalog.defaults().map((e) => e.id)
        : local.catalog.expandKnownSets(request.engines);
      // The marking goes to an oas server; one above AMBER is not sent to a server that knows none.
      let marking: { tlp?: Tlp; pap?: Pap };
      try {
        marking = parseMarking(request);
      } catch (error) {
        if (error instanceof MarkingError) throw new ToolError(error.message);
        throw error;
      }
      const refused = await unmarkedServerRefusal(client, target.api.origin, marking);
      if (refused) throw new ToolError(refused);
      // A callback_url (issue 36) goes to an oas server only: a Cyberbro server would drop it.
      const callback = request.callback_url !== undefined ? { callback_url: request.callback_url } : {};
      if (request.callback_url !== undefined && !Array.isArray(((await client.catalogView()) as { engines?: unknown } | undefined)?.engines)) {
        throw new ToolError(`not sent: the server at ${target.api.origin} is not an oas server (no /ui/engines) and takes no callback_url`);
      }
      const allowlist = request.ignore_allowlist ? { ignore_allowlist: true } : {};
      if (request.file === undefined) return client.submit({ text: request.text, engines, ignore_cache: request.ignore_cache ?? false, ...allowlist, ...marking, ...callback });
      const view = (await client.catalogView()) as { engines?: unknown } | undefined;
      if (!Array.isArray(view?.engines)) {
        throw new ToolError(`not sent: the server at ${target.api.origin} is not an oas server (no /ui/engines) and takes no file; run oas mcp without --server to read the file here`);
      }
      return client.submitForm(analysisForm(request.file, { text: request.text, engines, ignore_cache: request.ignore_cache ?? false, ...allowlist, ...marking, ...callback }));
    }),
    state: (id) => withClient(async (client) => {
      const seen = await client.check(id);
      if (!seen) return undefined;
      // Spelled as ours (a Cyberbro server writes IPV4, EMAIL and an `extension: {}` placeholder), as `oas analyze --server` reads them.
      const results = (seen.results as (ObservableResult | null)[]).map((r) => (r === null ? null : normalizeResult(r)));
      return { id, complete: seen.complete, progress: undefined, results };
    }),
    engines: () => withClient(async (client) => {
      const view = (await client.catalogView().catch(() => undefined)) as CatalogView | undefined;
      if (!view || !Array.isArray(view.engines)) return localListing(local.catalog, local.config);
      return { engines: view.engines.map(entryOf), sets: Array.isArray(view.sets) ? view.sets : [] };
    }),
    push: (request, signal) => remotePush(target, token, request, signal),
    webUrl: (id) => new URL(`results/${encodeURIComponent(id)}`, target.site).href,
  };
}

/** The answer's fields as pushAnswerSchema has them, any other dropped (a newer server may add some). */
const remoteAnswer = v.object(pushAnswerSchema.pipe[0].entries);

/**
 * `POST {prefix}analyses/<id>/push` on an oas server: its answer, or ToolError with its one line
 * (the server's `error`, which names the target and what to check). A server without the endpoint
 * (Cyberbro, whose unknown paths are an HTML 404; an oas server before push) is said to be one.
 */
async function remotePush(target: RemoteTarget, token: string | undefined, request: PushToolRequest, signal: AbortSignal | undefined): Promise<PushAnswer> {
  const { analysis_id, ...body } = request;
  const url = new URL(`analyses/${encodeURIComponent(analysis_id)}/push`, target.api);
  const origin = target.api.origin;
  const line = (text: string) => {
    const one = inertLine(redact(text.trim(), token === undefined ? [] : [token]));
    return one.length > LINE_MAX ? `${one.slice(0, LINE_MAX - 1)}…` : one;
  };
  const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const deadline = AbortSignal.timeout(PUSH_TIMEOUT_MS);
  let status: number;
  let text: string;
  try {
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: signal ? AbortSignal.any([signal, deadline]) : deadline, redirect: 'follow' });
    status = response.status;
    text = await response.text();
  } catch (error) {
    if (deadline.aborted) throw new ToolError(`no answer from the server at ${origin} within ${PUSH_TIMEOUT_MS / 1000} s to the push of analysis ${analysis_id}; it may still finish there`);
    if (signal?.aborted) throw new ToolError('push cancelled: the server may still finish it');
    const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
    throw new ToolError(`cannot reach the server at ${origin}: ${typeof cause?.code === 'string' ? cause.code : line(error instanceof Error ? error.message : String(error))}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (status >= 200 && status <= 299) {
    const answer = v.safeParse(remoteAnswer, parsed);
    if (!answer.success) throw new ToolError(`unexpected answer to POST ${url.pathname} from ${origin} (HTTP ${status}): not a push result`);
    return { ...answer.output, message: line(answer.output.message) };
  }
  const error = typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string' ? line((parsed as { error: string }).error) : undefined;
  if (status === 401) {
    throw new ToolError(token === undefined
      ? `the server at ${origin} needs an API token (HTTP 401): give it with --token or OAS_API_TOKEN`
      : `the server at ${origin} refused the API token (HTTP 401): check --token or OAS_API_TOKEN`);
  }
  // The route's own 404 is an unknown analysis; any other (an HTML page, oas's "not found: POST ...") is no such route.
  if ((status === 404 && !(error && /^analysis \S+ not found$/.test(error))) || status === 405) {
    throw new ToolError(`not pushed: the server at ${origin} has no push endpoint (POST ${url.pathname} answered HTTP ${status}); it is not an oas server that pushes (a Cyberbro server has none): push from an oas server, or run oas mcp without --server`);
  }
  if (status === 429) throw new ToolError(`the server at ${origin} is rate limiting requests (HTTP 429)${error ? `: ${error}` : ''}`);
  if (error) throw new ToolError(error);
  throw new ToolError(`the server at ${origin} failed to push (HTTP ${status})`);
}

/** The multipart form of an oas server's `POST {prefix}analyze` with a file: the `file` part, `engines` comma-separated, and the other fields. */
function analysisForm(file: ToolFile, fields: { text: string; engines: string[]; ignore_cache: boolean; ignore_allowlist?: boolean; tlp?: Tlp; pap?: Pap; callback_url?: string }): FormData {
  const form = new FormData();
  form.append('file', new Blob([file.bytes]), file.name);
  form.append('engines', fields.engines.join(','));
  form.append('ignore_cache', String(fields.ignore_cache));
  if (fields.ignore_allowlist) form.append('ignore_allowlist', 'true');
  if (fields.tlp) form.append('tlp', fields.tlp);
  if (fields.pap) form.append('pap', fields.pap);
  if (fields.text.trim() !== '') form.append('text', fields.text);
  if (fields.callback_url !== undefined) form.append('callback_url', fields.callback_url);
  return form;
}
