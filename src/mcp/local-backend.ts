/**
 * The MCP tools on this process's analyses: the same service, runner, cache and quotas as `oas
 * analyze` and the API (with `redis_url` on a server, the analyses go to the queue as the API's do).
 * A tool's file (issue 35) is read here, as the API reads an upload, and joins the request as its `files`.
 * A push (issue 37, `push_results`) is src/push/service.ts's, as `oas push` and the API's.
 */
import { InputError } from '../analysis/request.js';
import type { AnalysisService } from '../analysis/service.js';
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import type { PushServices } from '../push/service.js';
import { inertLine } from '../text/inert.js';
import type { AnalysisOrigin } from '../store/analysis-store.js';
import { catalogView } from '../view/catalog-view.js';
import type { EngineView } from '../view/types.js';
import { ToolError, type AnalysisState, type EngineEntry, type McpBackend, type PushAnswer, type ToolFile } from './backend.js';

export interface LocalBackendOptions {
  catalog: Catalog;
  config: Config;
  analyses: AnalysisService;
  /** `server` (`/mcp`): resumed after a restart like the API's analyses; `cli` (`oas mcp`). */
  origin: AnalysisOrigin;
  /** The server's address, for absolute links; undefined over stdio. */
  site?: string | undefined;
  /**
   * What a push reads, as of now: the app's configuration, catalog, analyses and HTTP transport
   * (replaced by a reload on `/mcp`).
   */
  pushServices: () => PushServices;
}

export function localBackend(options: LocalBackendOptions): McpBackend {
  const { catalog, config, analyses } = options;
  const link = (id: string) => `${options.site ?? ''}/results/${id}`;
  return {
    catalog,
    async start({ file, ...rest }) {
      // A callback is delivered by a server's webhooks: `oas mcp` over stdio has none.
      if (rest.callback_url !== undefined && options.origin !== 'server') throw new ToolError('callback_url needs an oas server: use its /mcp, or oas mcp --server URL; oas mcp alone delivers no webhook');
      try {
        const request = file === undefined ? rest : { ...rest, files: [await readFile(file, config)] };
        // On oas serve (/mcp) a large text is extracted off the server's thread, as the API's is; a
        // request with a file is prepared the asynchronous way (its text extracted here, for `oas mcp`).
        const prepared = options.origin === 'server'
          ? await analyses.prepareWith(request, async (text) => (await import('../observables/extract-pool.js')).extractObservablesOffThread(text))
          : file === undefined ? analyses.prepare(request)
          : await analyses.prepareWith(request, async (text) => (await import('../observables/extract.js')).extractObservables(text));
        const header = await analyses.start(request, prepared, options.origin);
        return {
          id: header.id,
          link: link(header.id),
          observables: header.observables.length,
          engines: header.engines,
          ...(header.tlp ? { tlp: header.tlp } : {}),
          ...(header.pap ? { pap: header.pap } : {}),
          ...(header.source ? { source: header.source } : {}),
        };
      } catch (error) {
        if (error instanceof InputError) throw new ToolError(error.message);
        throw error;
      }
    },
    async state(id): Promise<AnalysisState | undefined> {
      const record = await analyses.latest(id);
      if (!record) return undefined;
      return { id, complete: record.complete, progress: { done: record.progress.done, total: record.progress.total }, results: record.results, verdicts: record.result_verdicts };
    },
    async push(request): Promise<PushAnswer> {
      const [{ pushAnalysis, PushRefusedError }, { PushError }, { reportJson }] = await Promise.all([
        import('../push/service.js'),
        import('../push/types.js'),
        import('../push/report.js'),
      ]);
      try {
        const report = await pushAnalysis(options.pushServices(), {
          target: request.target,
          analysisId: request.analysis_id,
          event_id: request.event_id,
          case_id: request.case_id,
          min_verdict: request.min_verdict,
          all: request.all,
        });
        return reportJson(report) as PushAnswer;
      } catch (error) {
        // Refused before anything was sent, or the platform failed: one line naming the target and what to check.
        if (error instanceof PushRefusedError || error instanceof PushError) throw new ToolError(inertLine(error.message));
        throw error;
      }
    },
    engines: async () => localListing(catalog, config),
    webUrl: link,
  };
}

/** A tool's file read here within the API's limits (max_upload_bytes, file_parse_timeout_ms), off the thread; loaded when a file comes. */
async function readFile(file: ToolFile, config: Config) {
  const [{ readToolFile }, { uploadLimits }] = await Promise.all([import('./tool-file.js'), import('../files/upload.js')]);
  return readToolFile(file, uploadLimits(config));
}

/** The engines and sets of a catalog, configured or not by `config`, as list_engines shows them. */
export function localListing(catalog: Catalog, config: Config): { engines: EngineEntry[]; sets: { name: string; engines: string[] }[] } {
  const view = catalogView(catalog, config);
  return {
    engines: view.engines.map(entryOf),
    sets: view.sets,
  };
}

/** An engine of the picker's view (this server's, or another oas server's `/ui/engines`) as list_engines shows it. */
export function entryOf(e: EngineView): EngineEntry {
  return {
    id: e.id,
    service: e.service,
    label: e.label,
    description: e.description,
    types: e.types,
    tags: e.tags,
    default: e.default,
    custom: e.catalog === 'custom',
    configured: e.configured,
    ...(e.configured ? {} : { needs: e.configure_hint || 'its credentials' }),
  };
}
