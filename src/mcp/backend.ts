/**
 * Where the MCP tools run analyses: this process's runner, configuration, cache and quotas (`oas
 * mcp`, and `/mcp` on `oas serve`), or another oas or Cyberbro server through its API (`oas mcp
 * --server`). The tools (src/mcp/tools.ts) see only this interface.
 */
import type { Catalog } from '../engine/catalog.js';
import type { AnalysisSource } from '../files/types.js';
import type { ObservableResult } from '../runner/result.js';
import type { ObservableVerdict } from '../verdict/verdict.js';
import type { InferOutput } from 'valibot';
import type { pushAnswerSchema } from '../push/request.js';

/** A failure the tool reports as its result (`isError`), in one line: an unknown engine, an unknown analysis. */
export class ToolError extends Error {
  override name = 'ToolError';
}

export interface AnalysisState {
  id: string;
  complete: boolean;
  /** Lookups done and to do; undefined when the server does not tell (Cyberbro). */
  progress: { done: number; total: number } | undefined;
  /** In input order; null for an observable not finished yet (all there once complete). */
  results: (ObservableResult | null)[];
  /** Beside `results`: each one's verdict as stored when it finished, where known (issue 33: not worked out again). */
  verdicts?: (ObservableVerdict | undefined)[];
}

/** An analysis started: its id and page; how many observables and which engines when known (this process's). */
export interface StartedAnalysis {
  id: string;
  link: string;
  observables?: number;
  engines?: string[];
  /** Its marking, when the analysis runs here (issue 34). */
  tlp?: string;
  pap?: string;
  /** Its files' formats and sizes, when it was made from a file and runs here (issue 35: the audit trail's). */
  source?: AnalysisSource;
}

/** A tool's file (`file_base64`, decoded by src/mcp/tool-file.ts): its name as given (cleaned) and its bytes. */
export interface ToolFile {
  name: string;
  bytes: Uint8Array;
}

/** What `analyze` asks a backend to start. */
export interface StartRequest {
  /** May be empty when `file` is given. */
  text: string;
  /** A file (`file_base64`, decoded and checked against max_upload_bytes): read here, or posted to the server. */
  file?: ToolFile | undefined;
  engines?: string[] | undefined;
  ignore_cache?: boolean | undefined;
  /** Analyse even what the allowlist covers (issue 38). */
  ignore_allowlist?: boolean | undefined;
  tlp?: string | undefined;
  pap?: string | undefined;
  /** Where the server also posts analysis.completed (issue 36): checked against its setting callback_hosts. */
  callback_url?: string | undefined;
  started_by?: string | undefined;
}

/** An engine as `list_engines` shows it. */
export interface EngineEntry {
  id: string;
  service: string;
  label: string;
  description: string;
  types: string[];
  tags: string[];
  default: boolean;
  custom: boolean;
  configured: boolean;
  /** What it needs when it is not configured (where to set it: never a value). */
  needs?: string;
}

/** What `push_results` asks a backend to push (issue 37): an analysis, and the request of src/push/request.ts. */
export interface PushToolRequest {
  analysis_id: string;
  target: string;
  event_id?: string | undefined;
  case_id?: string | undefined;
  min_verdict?: string | undefined;
  all?: boolean | undefined;
}

/** What a push came to, as the API answers it (`pushAnswerSchema`): `message` is its one line. */
export type PushAnswer = InferOutput<typeof pushAnswerSchema>;

export interface McpBackend {
  /** The catalog the verdicts and summaries are made with. */
  readonly catalog: Catalog;
  /** Starts an analysis (ToolError for bad input: no observable, unknown engine or set, a file that cannot be read). */
  start(request: StartRequest): Promise<StartedAnalysis>;
  /** Where the analysis is; undefined for an unknown id. */
  state(id: string): Promise<AnalysisState | undefined>;
  engines(): Promise<{ engines: EngineEntry[]; sets: { name: string; engines: string[] }[] }>;
  /**
   * Pushes a complete analysis into a platform of the team (issue 37): what was created or found,
   * with counts and `message`, its one line (the API's answer, src/push/report.ts `reportJson`).
   * A refused push (a target not configured, a TLP above its max_tlp, an unknown or running
   * analysis), a platform that failed, or a server without push: ToolError in one line.
   */
  push(request: PushToolRequest, signal?: AbortSignal): Promise<PushAnswer>;
  /** The web page of an analysis (absolute when the server's address is known). */
  webUrl(id: string): string;
}
