/**
 * A custom engine's definition made an engine like the others: one HTTP request built from the
 * templates, the JSON answer read through the JSON Pointers of `fields`, a summary and evidence
 * from their templates and rules. It runs through the same runner, cache, quotas and HTTP client
 * (proxy, retries on 429 and 5xx, timeouts, redaction) as the engines of `engines/`.
 */
import type { CredentialSpec, EngineDefinition, EngineContext, EngineTag, Evidence, RequestOptions } from '../engine/contract.js';
import { CredentialsRefusedError } from '../engine/contract.js';
import { HASH_TYPES, IP_TYPES, type Observable } from '../observables/types.js';
import * as v from 'valibot';
import type { BodyNode, CustomEngineSpec, EvidenceRule } from './definition.js';
import { resolvePointer } from './pointer.js';
import { renderTemplate, type Template } from './template.js';

/** The result of a custom engine: exactly its `fields`, each a JSON value or null. */
export type CustomResult = Record<string, unknown>;

const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * Start-up cost: the HTTP client's module (and node:http, node:dns behind it) is loaded by the
 * first lookup, not when the catalog is built, so `oas engines` with custom engines does not pay
 * for it (the call itself runs on that client already).
 */
let httpModules: Promise<[typeof import('../http/client.js'), typeof import('../http/errors.js')]> | undefined;
const httpModule = () => (httpModules ??= Promise.all([import('../http/client.js'), import('../http/errors.js')]));

/** The setting a secret's value is kept under (read only from its environment variable). */
export function secretSetting(name: string): string {
  return `secret.${name}`;
}

export function customEngine(spec: CustomEngineSpec): EngineDefinition<CustomResult> {
  const credentials: CredentialSpec[] = spec.secrets.map(([name, env]) => ({ setting: secretSetting(name), label: env, env: [env], envOnly: true }));
  return {
    id: spec.id,
    service: spec.id,
    label: spec.label,
    description: spec.description,
    catalogs: [],
    custom: true,
    cacheScope: `custom-${spec.fingerprint}`,
    tags: tagsOf(spec),
    types: spec.types,
    reversedIp: spec.reversedIp,
    pivot: false,
    acceptsPrivateIp: false,
    dependsOn: [],
    // Where it sends an observable, as its definition says (default: a public service that does not reach the target).
    disclosure: spec.disclosure,
    touchesTarget: spec.touchesTarget,
    credentials,
    defaults: {
      timeout_ms: spec.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(spec.maxTlp !== undefined ? { max_tlp: spec.maxTlp } : {}),
      ...(spec.maxPap !== undefined ? { max_pap: spec.maxPap } : {}),
      ...(spec.concurrency !== undefined ? { concurrency: spec.concurrency } : {}),
      ...(spec.quota ? { rate_limit: spec.quota.calls, rate_window_ms: Math.round(spec.quota.perSeconds * 1000) } : {}),
    },
    summary: (result) => summaryOf(spec, result),
    evidence: (result) => evidenceOf(spec.evidence, result),
    run: (observable, ctx) => lookup(spec, observable, ctx),
  };
}

async function lookup(spec: CustomEngineSpec, observable: Observable, ctx: EngineContext): Promise<CustomResult | null> {
  const secrets = new Map(spec.secrets.map(([name]) => [name, String(ctx.settings[secretSetting(name)] ?? '')]));
  // Every form a secret takes in the request (URL-encoded, form-encoded, JSON-escaped, Base64) is
  // redacted from errors and results, not only its text.
  const http = ctx.http.withSecrets([...secrets.values()].flatMap(encodings));
  const raw = (name: string): string => {
    if (name === 'value' || name === 'raw') return observable.value;
    if (name === 'type') return observable.type;
    return secrets.get(name.slice('secret.'.length)) ?? '';
  };
  const url = renderTemplate(spec.request.url, (name) => (name === 'raw' ? raw(name) : encodeURIComponent(raw(name))));
  const options: RequestOptions = {
    method: spec.request.method,
    // JSON is what is read; a definition's own Accept wins.
    headers: { accept: 'application/json', ...Object.fromEntries(spec.request.headers.map(([name, template]) => [name.toLowerCase(), renderTemplate(template, raw)])) },
    query: Object.fromEntries(spec.request.query.map(([name, template]) => [name, typeof template === 'string' ? template : renderTemplate(template, raw)])),
    acceptStatus: spec.notFound,
    ...(spec.sslVerify !== undefined ? { sslVerify: spec.sslVerify } : {}),
  };
  if (spec.request.body !== undefined) {
    const body = renderBody(spec.request.body, raw);
    if (spec.request.form) options.form = Object.fromEntries(Object.entries(body as Record<string, unknown>).map(([k, value]) => [k, String(value)]));
    else options.json = body;
  }
  const [{ parseJson }, { HttpStatusError }] = await httpModule();
  let response;
  try {
    response = await http.request(url, options);
  } catch (error) {
    if (error instanceof HttpStatusError && (error.status === 401 || error.status === 403)) {
      throw new CredentialsRefusedError(spec.label, `HTTP ${error.status}`);
    }
    throw error;
  }
  if (spec.notFound.includes(response.status)) return null;
  const answer = parseJson(response.text(), v.unknown());
  const result: CustomResult = {};
  for (const [name, pointer] of spec.fields) result[name] = scrub(resolvePointer(answer, pointer) ?? null, (text) => http.redact(text));
  return result;
}

/** The forms a secret may take in a request, besides its text. */
function encodings(secret: string): string[] {
  if (secret === '') return [];
  return [
    encodeURIComponent(secret),
    // In a URL's query string (written in request.url), the URL parser also sends ' as %27.
    encodeURIComponent(secret).replaceAll("'", '%27'),
    new URLSearchParams({ s: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
  ].filter((form) => form !== secret);
}

/** A value of the answer with every string passed through `redact` (an upstream that echoes the key). */
function scrub(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item) => scrub(item, redact));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, item]) => [redact(k), scrub(item, redact)]));
  return value;
}

function renderBody(node: BodyNode, raw: (name: string) => string): unknown {
  if ('template' in node) return renderTemplate(node.template, raw);
  if ('literal' in node) return node.literal;
  if ('list' in node) return node.list.map((item) => renderBody(item, raw));
  return Object.fromEntries(node.object.map(([key, item]) => [key, renderBody(item, raw)]));
}

/** A field's value in one line: `-` for none, a list's items joined, an object as JSON. */
export function display(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map((item) => (typeof item === 'object' && item !== null ? JSON.stringify(item) : display(item))).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function fill(template: Template, result: CustomResult | null): string {
  return renderTemplate(template, (name) => display(result?.[name]));
}

function summaryOf(spec: CustomEngineSpec, result: CustomResult): string {
  if (spec.summary) return fill(spec.summary, result);
  const said = spec.fields.filter(([name]) => result[name] !== null && result[name] !== undefined);
  return said.length === 0 ? 'no field in the answer' : said.map(([name]) => `${name}: ${display(result[name])}`).join('; ');
}

/** The first rule that matches gives the evidence; a "no data" answer is judged with every field null. */
export function evidenceOf(rules: readonly EvidenceRule[], result: CustomResult | null): Evidence | undefined {
  for (const rule of rules) {
    if (matches(rule, result?.[rule.field] ?? null)) return { level: rule.verdict, reason: fill(rule.reason, result) };
  }
  return undefined;
}

function matches(rule: EvidenceRule, field: unknown): boolean {
  switch (rule.op) {
    case 'exists':
      return (field !== null) === rule.value;
    case '==':
      return same(field, rule.value);
    case '!=':
      // A field the answer lacks differs from nothing: `category != "benign"` must not flag an
      // address the source does not know (compare with null, or use exists, for that).
      return (field !== null || rule.value === null) && !same(field, rule.value);
    case 'contains':
      if (Array.isArray(field)) return field.some((item) => same(item, rule.value));
      return typeof field === 'string' && field.toLowerCase().includes(String(rule.value).toLowerCase());
    default: {
      const n = numberOf(field);
      const limit = rule.value as number;
      if (n === undefined) return false;
      return rule.op === '>' ? n > limit : rule.op === '>=' ? n >= limit : rule.op === '<' ? n < limit : n <= limit;
    }
  }
}

/** Equal as JSON scalars; a number also equals its text (`"80"` == 80), a text case-insensitively. */
function same(field: unknown, value: unknown): boolean {
  if (field === value) return true;
  if (typeof value === 'number') return numberOf(field) === value;
  if (typeof value === 'string' && typeof field === 'string') return field.toLowerCase() === value.toLowerCase();
  if (typeof value === 'string' && typeof field === 'number') return numberOf(value) === field;
  return false;
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

function tagsOf(spec: CustomEngineSpec): EngineTag[] {
  const tags: EngineTag[] = [];
  const has = (types: readonly string[]) => types.some((t) => (spec.types as readonly string[]).includes(t));
  if (has(IP_TYPES)) tags.push('IP');
  if (has(['FQDN'])) tags.push('domain');
  if (has(['URL'])) tags.push('URL');
  if (has(HASH_TYPES)) tags.push('hash');
  if (has(['Email'])) tags.push('email');
  if (spec.secrets.length === 0) tags.push('free_no_key');
  return tags;
}
