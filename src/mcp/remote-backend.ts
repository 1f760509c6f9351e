/**
 * The MCP tools on another server (`oas mcp --server URL`): an oas server, or a Cyberbro one,
 * through its three endpoints, like `oas analyze --server`. The verdicts and engine lines are made
 * here with the local catalog (and the local configuration's custom engines), as that command does.
 * A tool's file (issue 35) goes to an oas server as its API takes one, a multipart `POST
 * {prefix}analyze`, and is read there; a Cyberbro server takes no file, so none is sent to it.
 */
import { normalizeResult, RemoteClient, RemoteError, unmarkedServerRefusal, type RemoteTarget } from '../cli/remote.js';
import { MarkingError, parseMarking, type Pap, type Tlp } from '../marking/levels.js';
import { UsageError } from '../cli/errors.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import type { ObservableResult } from '../runner/result.js';
import type { CatalogView } from '../view/types.js';
import { entryOf, localListing } from './local-backend.js';
import { ToolError, type McpBackend, type ToolFile } from './backend.js';

/** Each call to the server gets this long (an analysis's wait is the tool's, polling between calls). */
const CALL_TIMEOUT_MS = 30_000;

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
      if (request.file === undefined) return client.submit({ text: request.text, engines, ignore_cache: request.ignore_cache ?? false, ...marking, ...callback });
      const view = (await client.catalogView()) as { engines?: unknown } | undefined;
      if (!Array.isArray(view?.engines)) {
        throw new ToolError(`not sent: the server at ${target.api.origin} is not an oas server (no /ui/engines) and takes no file; run oas mcp without --server to read the file here`);
      }
      return client.submitForm(analysisForm(request.file, { text: request.text, engines, ignore_cache: request.ignore_cache ?? false, ...marking, ...callback }));
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
    webUrl: (id) => new URL(`results/${encodeURIComponent(id)}`, target.site).href,
  };
}

/** The multipart form of an oas server's `POST {prefix}analyze` with a file: the `file` part, `engines` comma-separated, and the other fields. */
function analysisForm(file: ToolFile, fields: { text: string; engines: string[]; ignore_cache: boolean; tlp?: Tlp; pap?: Pap; callback_url?: string }): FormData {
  const form = new FormData();
  form.append('file', new Blob([file.bytes]), file.name);
  form.append('engines', fields.engines.join(','));
  form.append('ignore_cache', String(fields.ignore_cache));
  if (fields.tlp) form.append('tlp', fields.tlp);
  if (fields.pap) form.append('pap', fields.pap);
  if (fields.text.trim() !== '') form.append('text', fields.text);
  if (fields.callback_url !== undefined) form.append('callback_url', fields.callback_url);
  return form;
}
