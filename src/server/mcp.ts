/**
 * `/mcp`: the MCP server over the Streamable HTTP transport, stateless (each POST carries its own
 * request, and a tool's progress comes back on that request's event stream). It sits behind the
 * same Host check, token and body limit as the API (src/server/listen.ts); an `analyze` call counts
 * against `rate_limit_per_minute` like a POST to the API's analyze, and over the limit it is a tool
 * error saying when to retry. Setting `mcp` (false) leaves it out.
 *
 * A tool's file (issue 35: `file_base64`) is bounded by max_upload_bytes, not max_body_bytes, as a
 * multipart upload to the API is: the body may hold max_body_bytes besides a file of that size in
 * base64, and a `text` is still held to max_body_bytes (the tools check it). An analysis of a file
 * is audited with its extensions and size, as the API's is.
 *
 * `push_results` (issue 37) is an analyst's, as `POST {prefix}analyses/<id>/push` is (a viewer's is
 * a tool error naming its role), and each push that ran is an audit line `results_pushed` with
 * origin mcp: target, analysis and counts, or the failure's line; never an observable.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { App } from '../app.js';
import { ToolError, type McpBackend } from '../mcp/backend.js';
import { localBackend } from '../mcp/local-backend.js';
import { createMcpServer } from '../mcp/server.js';
import { hasRole } from '../store/users.js';
import { auditedId, NO_AUDIT_REQUEST, type AuditRequest } from './audit.js';
import { fileAudit } from './api.js';
import { uploadLimits } from '../files/upload.js';
import { markingSettings } from '../marking/policy.js';
import { forbiddenMessage } from './auth.js';
import { remoteAddress } from './rate-limit.js';

export interface McpRouteOptions {
  app: App;
  version: string;
  limiter: RateLimiterAbstract | undefined;
  redact(text: string): string;
  /** The client's address for the rate limit when unauthenticated (proxy-auth.ts); the peer by default. */
  clientAddress?: (c: Context) => string;
  /** The audit trail (analyses started, results read through get_results and get_analysis_results). */
  audit?: AuditRequest;
}

export function createMcpRoute(options: McpRouteOptions): Hono {
  const { app, limiter } = options;
  const audit = options.audit ?? NO_AUDIT_REQUEST;
  const { config } = app;
  const routes = new Hono();
  const rpcError = (message: string) => ({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
  const uploads = { ...uploadLimits(config), background: true };
  const { internalScope } = markingSettings(config);
  // max_body_bytes, and room for a file of max_upload_bytes as base64 (4 characters per 3 bytes).
  const maxBody = config.max_body_bytes + Math.ceil(config.max_upload_bytes / 3) * 4;
  routes.post(
    '/mcp',
    bodyLimit({ maxSize: maxBody, onError: (c) => c.json(rpcError(`request body larger than max_body_bytes (${config.max_body_bytes}) plus a file_base64 of max_upload_bytes (${config.max_upload_bytes})`), 413) }),
    async (c) => {
      const client = c.get('oasClient') ?? `address:${(options.clientAddress ?? remoteAddress)(c)}`;
      const who = c.get('oasUser');
      const local = localBackend({
        catalog: app.catalog,
        config,
        analyses: app.analyses,
        origin: 'server',
        site: new URL(c.req.url).origin,
        // A push reads the configuration and catalog in effect (a reload replaces them), and goes through the app's one transport.
        pushServices: () => ({ config: app.config, catalog: app.catalog, transport: app.transport, analyses: app.analyses }),
      });
      const backend: McpBackend = {
        ...local,
        start: async (request) => {
          // A viewer reads results over MCP, as over the API; starting an analysis is an analyst's.
          if (who && !hasRole(who.role, 'analyst')) throw new ToolError(forbiddenMessage(who, 'analyst'));
          await consume(limiter, client);
          const started = await local.start({ ...request, started_by: who?.name });
          audit(c, { action: 'analysis_started', outcome: 'success', analysis_id: started.id, origin: 'mcp', observables: started.observables, engines: started.engines, tlp: started.tlp, pap: started.pap, ...fileAudit(started.source) });
          return started;
        },
        push: async (request, signal) => {
          // Pushing writes into the team's platform: an analyst's, as over the API.
          if (who && !hasRole(who.role, 'analyst')) throw new ToolError(forbiddenMessage(who, 'analyst', 'pushing results to a platform needs the analyst or admin role'));
          const fields = { origin: 'mcp', target: request.target, analysis_id: auditedId(request.analysis_id) } as const;
          try {
            const pushed = await local.push(request, signal);
            audit(c, { action: 'results_pushed', outcome: 'success', ...fields, kind: pushed.kind, id: pushed.id, created: pushed.created, added: pushed.added, existing: pushed.existing, selected: pushed.selected, withheld: pushed.withheld });
            return pushed;
          } catch (error) {
            if (error instanceof ToolError) audit(c, { action: 'results_pushed', outcome: 'failure', ...fields, reason: error.message });
            throw error;
          }
        },
      };
      const server = createMcpServer(backend, {
        version: options.version,
        maxResultChars: config.mcp_max_result_chars,
        cyberbroTools: config.mcp_cyberbro_tools,
        uploads,
        internalScope,
        maxTextBytes: config.max_body_bytes,
        redact: options.redact,
        onCall: ({ tool, args, error, structured }) => {
          if (tool !== 'get_results' && tool !== 'get_analysis_results') return;
          // get_results of a running analysis is a poll: nothing read yet.
          if (error === undefined && structured?.complete === false) return;
          const analysis_id = auditedId(typeof args.analysis_id === 'string' ? args.analysis_id : undefined);
          const read = { action: 'results_read', analysis_id, origin: 'mcp', format: tool } as const;
          audit(c, error === undefined ? { ...read, outcome: 'success' } : { ...read, outcome: 'failure', reason: readFailure(error) });
        },
      });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, maxRequestBodySize: maxBody });
      await server.connect(transport);
      return transport.handleRequest(c.req.raw);
    },
  );
  // Stateless: no stream of the server's own and no session to end.
  routes.on(['GET', 'DELETE'], '/mcp', (c) => c.json(rpcError('method not allowed: this MCP endpoint is stateless; send requests with POST'), 405, { Allow: 'POST' }));
  return routes;
}

/** A tool's refusal as the audit trail words it (the tool's message may quote what the model sent). */
function readFailure(error: string): string {
  if (/^analysis not found/.test(error)) return 'analysis not found';
  if (/not complete/.test(error)) return 'analysis not complete yet';
  return 'error';
}

async function consume(limiter: RateLimiterAbstract | undefined, client: string): Promise<void> {
  if (!limiter) return;
  try {
    await limiter.consume(client, 1);
  } catch (error) {
    if (!(error instanceof RateLimiterRes)) throw error;
    const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    throw new ToolError(`too many analyses: at most ${limiter.points} per minute per client (setting rate_limit_per_minute); retry in ${seconds} s`);
  }
}
