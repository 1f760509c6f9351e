/**
 * A custom engine's definition (setting `custom_engines.<id>`), checked and parsed. Every problem
 * is a DefinitionError naming the exact path and what is wrong, on one line:
 * `custom_engines.intel.request.url: unknown placeholder {valu}`.
 */
import { createHash } from 'node:crypto';
import { isHttpUrl } from '../config/schema.js';
import { closest } from '../lookup/did-you-mean.js';
import { OBSERVABLE_TYPES, type ObservableType } from '../observables/types.js';
import { DISCLOSURES, parsePap, parseTlp, type Disclosure, type Pap, type Tlp } from '../marking/levels.js';
import { parsePointer, type Pointer } from './pointer.js';
import { parseTemplate, renderTemplate, TemplateError, type Template } from './template.js';

export class DefinitionError extends Error {
  override name = 'DefinitionError';
}

export const RULE_OPS = ['==', '!=', '>', '>=', '<', '<=', 'contains', 'exists'] as const;
export type RuleOp = (typeof RULE_OPS)[number];
export const RULE_VERDICTS = ['malicious', 'suspicious', 'clean'] as const;

export interface EvidenceRule {
  field: string;
  op: RuleOp;
  /** What the field is compared with; for `exists`, whether the field must be there (default true). */
  value: unknown;
  verdict: (typeof RULE_VERDICTS)[number];
  reason: Template;
}

/** A JSON body whose strings are templates. */
export type BodyNode = { template: Template } | { literal: unknown } | { list: BodyNode[] } | { object: [string, BodyNode][] };

export interface CustomEngineSpec {
  id: string;
  label: string;
  description: string;
  types: ObservableType[];
  reversedIp: boolean;
  request: {
    method: 'GET' | 'POST';
    url: Template;
    headers: [string, Template][];
    query: [string, Template | string][];
    body: BodyNode | undefined;
    /** The body is sent as a form (`Content-Type: application/x-www-form-urlencoded`), else as JSON. */
    form: boolean;
  };
  /** Secret name → the environment variable that holds it. */
  secrets: [string, string][];
  notFound: number[];
  fields: [string, Pointer][];
  summary: Template | undefined;
  evidence: EvidenceRule[];
  timeoutMs: number | undefined;
  concurrency: number | undefined;
  quota: { calls: number; perSeconds: number } | undefined;
  sslVerify: boolean | undefined;
  /** Where an observable goes (issue 34): `third_party` unless the definition says otherwise. */
  disclosure: Disclosure;
  touchesTarget: boolean;
  /** The ceilings the definition sets (`max_tlp`, `max_pap`); else the defaults of its disclosure. */
  maxTlp: Tlp | undefined;
  maxPap: Pap | undefined;
  /** A short hash of the definition (no secret in it: only variable names): its cache scope. */
  fingerprint: string;
}

const FIELDS = [
  'label', 'description', 'types', 'reversed_ip', 'request', 'secrets', 'not_found', 'fields', 'summary', 'evidence',
  'timeout_ms', 'concurrency', 'quota', 'ssl_verify', 'disclosure', 'touches_target', 'max_tlp', 'max_pap',
] as const;
const REQUEST_FIELDS = ['method', 'url', 'headers', 'query', 'body'] as const;
const RULE_FIELDS = ['field', 'op', 'value', 'verdict', 'reason'] as const;
const ID = /^[a-z][a-z0-9_]*$/;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** 20 or more letters and digits, both, and no "_": a key (hex, Base62), not a variable's name. */
const LOOKS_LIKE_A_KEY = /^(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{20,}$/;
const FIELD_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_NAMES = new Set(['value', 'raw', 'type']);
/**
 * The keys every result element holds beside its engines' (src/runner/result.ts), and those the
 * JSON output and exports add (the verdict, its reasons, the marking): an engine of that id would overwrite them.
 */
const RESULT_KEYS = ['observable', 'type', 'found_in', 'reversed_success', 'reversed_ip', 'errors', 'withheld', 'verdict', 'reasons', 'tlp', 'pap'];

/**
 * The definition of `custom_engines.<id>`, parsed; `taken` are the names already in use (the
 * built-in engines' ids and aliases).
 */
export function parseDefinition(id: string, raw: unknown, taken: ReadonlySet<string>): CustomEngineSpec {
  const at = `custom_engines.${id}`;
  if (!ID.test(id)) throw new DefinitionError(`${at}: an engine id is lower-case letters, digits and "_", starting with a letter`);
  if (taken.has(id)) throw new DefinitionError(`${at}: "${id}" is already the id or alias of a built-in engine; choose another id`);
  if (RESULT_KEYS.includes(id)) throw new DefinitionError(`${at}: "${id}" is a key of every result (${RESULT_KEYS.join(', ')}); choose another id`);
  const def = object(raw, at, 'an object such as { "types": ["IPv4"], "request": { "url": "https://intel.example/ip/{value}" }, "fields": { "score": "/score" } }');
  known(def, FIELDS, at);

  const secrets = entries(def.secrets, `${at}.secrets`, 'an object of secret names and the environment variables that hold them, such as { "KEY": "INTEL_API_KEY" }')
    .map(([name, env]): [string, string] => {
      if (!SECRET_NAME.test(name)) throw new DefinitionError(`${at}.secrets.${name}: a secret name is letters, digits and "_"`);
      if (typeof env !== 'string' || !ENV_NAME.test(env)) {
        throw new DefinitionError(`${at}.secrets.${name}: expected the name of an environment variable such as INTEL_API_KEY (the secret itself never lives in the file)`);
      }
      // A key pasted in place of the variable's name would be shown wherever the variable is named
      // (`oas engines`, "not configured: ..."): refused, and never repeated in the message.
      if (LOOKS_LIKE_A_KEY.test(env)) {
        throw new DefinitionError(`${at}.secrets.${name}: this looks like a key, not the name of an environment variable: put the key in a variable (such as INTEL_API_KEY) and name that variable here`);
      }
      return [name, env];
    });
  const secretNames = new Set(secrets.map(([name]) => name));
  const requestName = (name: string) => REQUEST_NAMES.has(name) || (name.startsWith('secret.') && secretNames.has(name.slice(7)));
  const requestTemplate = (text: unknown, path: string) => {
    if (typeof text !== 'string') throw new DefinitionError(`${path}: expected a string (a template)`);
    return template(text, path, requestName, (name) => {
      if (name.startsWith('secret.')) return ` (declare ${name.slice(7)} under ${at}.secrets)`;
      const near = closest(name, [...REQUEST_NAMES, ...[...secretNames].map((s) => `secret.${s}`)]);
      return near ? `; did you mean {${near}}?` : ' (known: {value}, {raw}, {type}, {secret.NAME})';
    });
  };

  const types = list(def.types, `${at}.types`, `a non-empty list of observable types (${OBSERVABLE_TYPES.join(', ')})`).map((type, i) => {
    if (!(OBSERVABLE_TYPES as readonly unknown[]).includes(type)) {
      const hint = typeof type === 'string' ? closest(type, OBSERVABLE_TYPES) : undefined;
      throw new DefinitionError(`${at}.types.${i}: ${JSON.stringify(type)} is no observable type${hint ? `; did you mean ${hint}?` : ''} (types: ${OBSERVABLE_TYPES.join(', ')})`);
    }
    return type as ObservableType;
  });
  if (types.length === 0) throw new DefinitionError(`${at}.types: must name at least one observable type (${OBSERVABLE_TYPES.join(', ')})`);
  const reversedIp = optionalBoolean(def.reversed_ip, `${at}.reversed_ip`) ?? false;
  if (reversedIp && !types.includes('IPv4') && !types.includes('IPv6')) {
    throw new DefinitionError(`${at}.reversed_ip: the reversed IP is an address: add IPv4 or IPv6 to types`);
  }

  const request = object(def.request, `${at}.request`, 'an object such as { "url": "https://intel.example/ip/{value}" }');
  known(request, REQUEST_FIELDS, `${at}.request`);
  const method = request.method ?? 'GET';
  if (method !== 'GET' && method !== 'POST') throw new DefinitionError(`${at}.request.method: expected "GET" or "POST"`);
  if (request.url === undefined) throw new DefinitionError(`${at}.request.url: missing (the address to call, such as "https://intel.example/ip/{value}")`);
  const url = requestTemplate(request.url, `${at}.request.url`);
  const sample = renderTemplate(url, (name) => (name === 'type' ? 'IPv4' : 'x'));
  if (!isHttpUrl(sample)) throw new DefinitionError(`${at}.request.url: expected an http:// or https:// URL`);
  const headers = entries(request.headers, `${at}.request.headers`, 'an object of header names and templates').map(([name, value]): [string, Template] => {
    if (!HEADER_NAME.test(name)) throw new DefinitionError(`${at}.request.headers.${name}: not a valid header name`);
    return [name, requestTemplate(value, `${at}.request.headers.${name}`)];
  });
  const query = entries(request.query, `${at}.request.query`, 'an object of parameter names and templates').map(([name, value]): [string, Template | string] => {
    if (typeof value === 'number' || typeof value === 'boolean') return [name, String(value)];
    return [name, requestTemplate(value, `${at}.request.query.${name}`)];
  });
  const contentType = headers.find(([name]) => name.toLowerCase() === 'content-type');
  const form = contentType !== undefined && contentType[1].some((part) => 'text' in part && /application\/x-www-form-urlencoded/i.test(part.text));
  let body: BodyNode | undefined;
  if (request.body !== undefined) {
    if (method !== 'POST') throw new DefinitionError(`${at}.request.body: a GET request has no body (set "method": "POST")`);
    if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) {
      throw new DefinitionError(`${at}.request.body: expected an object whose string values are templates`);
    }
    body = bodyNode(request.body, `${at}.request.body`, requestTemplate);
    if (form) {
      for (const [name, value] of Object.entries(request.body)) {
        if (typeof value === 'object' && value !== null) throw new DefinitionError(`${at}.request.body.${name}: a form body (Content-Type application/x-www-form-urlencoded) holds only strings, numbers and booleans`);
      }
    }
  }

  const notFound = def.not_found === undefined ? [404] : list(def.not_found, `${at}.not_found`, 'a list of HTTP statuses such as [404]').map((status, i) => {
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
      throw new DefinitionError(`${at}.not_found.${i}: expected an HTTP status (a whole number from 100 to 599)`);
    }
    return status;
  });

  const fields = entries(def.fields, `${at}.fields`, 'an object of result fields and JSON Pointers, such as { "score": "/data/score" }').map(([name, pointer]): [string, Pointer] => {
    if (!FIELD_NAME.test(name)) throw new DefinitionError(`${at}.fields.${name}: a field name is letters, digits, "_", "-" and "."`);
    const parsed = typeof pointer === 'string' ? parsePointer(pointer) : undefined;
    if (!parsed) throw new DefinitionError(`${at}.fields.${name}: not a JSON Pointer (RFC 6901: "" for the whole answer, or "/" then the keys, such as "/data/score")`);
    return [name, parsed];
  });
  if (fields.length === 0) throw new DefinitionError(`${at}.fields: name at least one result field, such as { "score": "/data/score" }`);
  const fieldNames = new Set(fields.map(([name]) => name));
  const fieldTemplate = (text: unknown, path: string) => {
    if (typeof text !== 'string') throw new DefinitionError(`${path}: expected a string (a template over the result fields)`);
    return template(text, path, (name) => fieldNames.has(name), (name) => {
      const near = closest(name, [...fieldNames]);
      return near ? `; did you mean {${near}}?` : ` (fields: ${[...fieldNames].map((f) => `{${f}}`).join(', ')})`;
    });
  };
  const summary = def.summary === undefined ? undefined : fieldTemplate(def.summary, `${at}.summary`);

  const evidence = (def.evidence === undefined ? [] : list(def.evidence, `${at}.evidence`, 'a list of rules such as { "field": "score", "op": ">=", "value": 80, "verdict": "malicious", "reason": "score {score}" }'))
    .map((raw, i): EvidenceRule => {
      const path = `${at}.evidence.${i}`;
      const rule = object(raw, path, 'a rule such as { "field": "score", "op": ">=", "value": 80, "verdict": "malicious", "reason": "score {score}" }');
      known(rule, RULE_FIELDS, path);
      if (typeof rule.field !== 'string' || !fieldNames.has(rule.field)) {
        throw new DefinitionError(`${path}.field: ${typeof rule.field === 'string' ? `unknown field ${rule.field}` : 'expected a field name'} (fields: ${[...fieldNames].join(', ')})`);
      }
      const op = rule.op;
      if (!(RULE_OPS as readonly unknown[]).includes(op)) throw new DefinitionError(`${path}.op: expected one of ${RULE_OPS.join(', ')}`);
      if (op === 'exists') {
        if (rule.value !== undefined && typeof rule.value !== 'boolean') throw new DefinitionError(`${path}.value: with "exists", true (the field is there, the default) or false (it is not)`);
      } else if (rule.value === undefined) {
        throw new DefinitionError(`${path}.value: missing (what the field is compared with)`);
      } else if (['>', '>=', '<', '<='].includes(op as string) && typeof rule.value !== 'number') {
        throw new DefinitionError(`${path}.value: "${String(op)}" compares numbers: expected a number`);
      } else if (typeof rule.value === 'object' && rule.value !== null) {
        throw new DefinitionError(`${path}.value: expected a string, a number, true, false or null`);
      }
      if (!(RULE_VERDICTS as readonly unknown[]).includes(rule.verdict)) throw new DefinitionError(`${path}.verdict: expected one of ${RULE_VERDICTS.join(', ')}`);
      const reason = rule.reason === undefined
        ? [{ text: `${rule.field} ${String(op)}${op === 'exists' ? '' : ` ${JSON.stringify(rule.value)}`}` }]
        : fieldTemplate(rule.reason, `${path}.reason`);
      return { field: rule.field, op: op as RuleOp, value: op === 'exists' ? (rule.value ?? true) : rule.value, verdict: rule.verdict as EvidenceRule['verdict'], reason };
    });

  const quotaRaw = def.quota === undefined ? undefined : object(def.quota, `${at}.quota`, 'an object such as { "calls": 4, "per_seconds": 60 }');
  if (quotaRaw) known(quotaRaw, ['calls', 'per_seconds'], `${at}.quota`);
  return {
    id,
    label: optionalString(def.label, `${at}.label`) ?? id,
    description: optionalString(def.description, `${at}.description`) ?? `Custom engine: ${String(request.url)}`,
    types: [...new Set(types)],
    reversedIp,
    request: { method, url, headers, query, body, form },
    secrets,
    notFound,
    fields,
    summary,
    evidence,
    timeoutMs: positive(def.timeout_ms, `${at}.timeout_ms`, true),
    concurrency: positive(def.concurrency, `${at}.concurrency`, true),
    quota: quotaRaw ? { calls: positive(quotaRaw.calls, `${at}.quota.calls`, true, true)!, perSeconds: positive(quotaRaw.per_seconds, `${at}.quota.per_seconds`, false, true)! } : undefined,
    sslVerify: optionalBoolean(def.ssl_verify, `${at}.ssl_verify`),
    disclosure: disclosureOf(def.disclosure, `${at}.disclosure`),
    touchesTarget: optionalBoolean(def.touches_target, `${at}.touches_target`) ?? false,
    maxTlp: marking(def.max_tlp, `${at}.max_tlp`, parseTlp),
    maxPap: marking(def.max_pap, `${at}.max_pap`, parsePap),
    fingerprint: createHash('sha256').update(JSON.stringify(raw)).digest('hex').slice(0, 12),
  };
}

function template(text: string, path: string, known: (name: string) => boolean, hint: (name: string) => string): Template {
  try {
    return parseTemplate(text, known);
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    const name = /^unknown placeholder \{(.*)\}$/.exec(error.message)?.[1];
    throw new DefinitionError(`${path}: ${error.message}${name === undefined ? '' : hint(name)}`);
  }
}

function bodyNode(value: unknown, path: string, templateOf: (text: unknown, path: string) => Template): BodyNode {
  if (typeof value === 'string') return { template: templateOf(value, path) };
  if (Array.isArray(value)) return { list: value.map((item, i) => bodyNode(item, `${path}.${i}`, templateOf)) };
  if (typeof value === 'object' && value !== null) return { object: Object.entries(value).map(([key, item]) => [key, bodyNode(item, `${path}.${key}`, templateOf)]) };
  return { literal: value };
}

function object(value: unknown, path: string, expected: string): Record<string, unknown> {
  if (value === undefined) throw new DefinitionError(`${path}: missing (expected ${expected})`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DefinitionError(`${path}: expected ${expected}`);
  return value as Record<string, unknown>;
}

function entries(value: unknown, path: string, expected: string): [string, unknown][] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DefinitionError(`${path}: expected ${expected}`);
  return Object.entries(value);
}

function list(value: unknown, path: string, expected: string): unknown[] {
  if (!Array.isArray(value)) throw new DefinitionError(`${path}: ${value === undefined ? 'missing' : 'expected'} ${value === undefined ? `(expected ${expected})` : expected}`);
  return value;
}

function known(record: Record<string, unknown>, names: readonly string[], path: string): void {
  for (const key of Object.keys(record)) {
    if (names.includes(key)) continue;
    const suggestion = closest(key, names);
    throw new DefinitionError(`${path}.${key}: unknown field${suggestion ? `; did you mean ${suggestion}?` : ` (fields: ${names.join(', ')})`}`);
  }
}

/** `none`, `internal` or `third_party` (the default). */
function disclosureOf(value: unknown, path: string): Disclosure {
  if (value === undefined) return 'third_party';
  if (typeof value === 'string' && (DISCLOSURES as readonly string[]).includes(value)) return value as Disclosure;
  throw new DefinitionError(`${path}: expected one of ${DISCLOSURES.join(', ')} (where the engine sends an observable)`);
}

/** A TLP or PAP level when given, read as the API reads one (`TLP:RED`, `red`). */
function marking<L>(value: unknown, path: string, parse: (value: unknown) => L): L | undefined {
  if (value === undefined) return undefined;
  try {
    return parse(value);
  } catch (error) {
    throw new DefinitionError(`${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function optionalString(value: unknown, path: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new DefinitionError(`${path}: expected a non-empty string`);
  return value;
}

function optionalBoolean(value: unknown, path: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new DefinitionError(`${path}: expected true or false`);
  return value;
}

function positive(value: unknown, path: string, whole: boolean, required = false): number | undefined {
  if (value === undefined) {
    if (required) throw new DefinitionError(`${path}: missing (expected a ${whole ? 'whole number of at least 1' : 'number above 0'})`);
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value)) || (whole && value < 1)) {
    throw new DefinitionError(`${path}: expected a ${whole ? 'whole number of at least 1' : 'number above 0'}`);
  }
  return value;
}
