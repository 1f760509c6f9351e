/** What the MCP tests share: a session of the SDK's client, tool calls and what they must answer. */
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { startFakeHttp, type FakeHttpServer, type FakeRequest } from '../fakes/http.js';
import { intelDefinitions, startInternalIntel, type InternalIntelFake, type IntelRecord } from '../fakes/internal-intel.js';
import * as virustotal from '../fakes/virustotal.js';
import { noStack } from './cli.js';

export interface McpSession {
  client: Client;
  /** Every message from the server, as JSON. */
  messages: string[];
  close(): Promise<void>;
}

export async function call(session: McpSession, name: string, args: Record<string, unknown> = {}, onprogress?: (progress: Progress) => void): Promise<CallToolResult> {
  return (await session.client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : {})) as CallToolResult;
}

export const textOf = (result: CallToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

/** A tool call that must fail with the protocol's invalid-params error: its message. */
export async function invalid(session: McpSession, name: string, args: Record<string, unknown>): Promise<string> {
  const error = await session.client.callTool({ name, arguments: args }).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof McpError, `${name} ${JSON.stringify(args)}: expected an MCP error, got ${String(error)}`);
  assert.equal(error.code, ErrorCode.InvalidParams, error.message);
  noStack(error.message);
  return error.message;
}

/** A tool call that must be a tool error (`isError`): its one line. */
export async function toolError(session: McpSession, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(session, name, args);
  assert.equal(result.isError, true, textOf(result));
  const text = textOf(result);
  assert.ok(!text.includes('\n'), `one line: ${text}`);
  noStack(text);
  return text;
}

/** An answer the test holds back until it calls `release` (a gated engine's fake). */
export class Gate {
  private opened: Promise<void> = Promise.resolve();
  private open: () => void = () => {};
  hold(): void {
    this.opened = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open();
  }
  wait(): Promise<void> {
    return this.opened;
  }
}

/** The structured answers of the tools. */
export interface Brief { observable: string; type: string; verdict: string; reasons: string[]; engines: Record<string, string> }
export interface Analyzed { analysis_id: string; link: string; complete: boolean; progress: { done: number; total: number } | null; observables: Brief[]; next?: string }
export interface Results { analysis_id: string; complete: boolean; results: Record<string, unknown>[]; left_out?: string }

/**
 * The upstreams the MCP tests point engines at, beside tests/helpers/upstreams.ts: the internal
 * intel API with `records` and a `/gate/*` route held by `gate`, and a VirusTotal whose 401 for
 * 1.1.1.1 echoes the key it got (no answer may carry it on). `extra` is the configuration for
 * them: VirusTotal, the intel engines, a `gated` custom engine and the set `triage`.
 */
export async function startMcpUpstreams(gate: Gate, records: Record<string, IntelRecord>): Promise<{ intel: InternalIntelFake; vt: FakeHttpServer; extra: Record<string, unknown> }> {
  const intel = await startInternalIntel({ records });
  intel.server.route('GET /gate/*', async (req: FakeRequest) => {
    await gate.wait();
    return { json: { score: 7, seen: req.path.slice('/gate/'.length) } };
  });
  const routes = virustotal.fakeRoutes();
  const ipRoute = routes[`GET ${virustotal.PREFIX}/ip_addresses/*`]!;
  const vt = await startFakeHttp({
    ...routes,
    [`GET ${virustotal.PREFIX}/ip_addresses/*`]: (req) => (req.path.endsWith('/1.1.1.1')
      ? { status: 401, json: { error: { code: 'WrongCredentialsError', message: `Wrong API key ${String(req.headers['x-apikey'])}` } } }
      : typeof ipRoute === 'function' ? ipRoute(req) : ipRoute),
  });
  const extra = {
    engines: { provider_24: virustotal.fakeSettings(vt.url) },
    custom_engines: {
      ...intelDefinitions(intel.url),
      gated: { label: 'Gated intel', types: ['IPv4'], request: { url: `${intel.url}/gate/{value}` }, fields: { score: '/score' }, summary: 'gated score {score}' },
    },
    engine_sets: { triage: ['reverse_dns', 'intel'] },
  };
  return { intel, vt, extra };
}
