/**
 * The OpenAPI 3.1 document of everything oas serves under the prefix (issue 36): served at
 * `GET {prefix}openapi.json` (src/server/api.ts) and printed by `oas openapi`. Built from the
 * route modules' contributions (CONTRIBUTIONS below: one entry per module), whose valibot schemas
 * are the ones the routes validate with, converted by Valibot's own converter
 * (@valibot/to-json-schema): the document cannot drift from the server. Loads no Hono and no
 * storage, so `oas openapi` needs no server.
 */
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from '@valibot/to-json-schema';
import type { GenericSchema } from 'valibot';
import { VERSION } from '../cli/version.js';
import { API_OPENAPI } from './api-openapi.js';
import { errorSchema } from './api-schemas.js';
import type { OpenApiBody, OpenApiContribution, OpenApiEntry, OpenApiResponse } from './openapi-entry.js';
import { WATCHLISTS_OPENAPI } from './watchlists-openapi.js';
import { PUSH_OPENAPI } from './push-openapi.js';
import { KNOWLEDGE_OPENAPI } from './knowledge-openapi.js';
import { DOCTOR_OPENAPI } from './doctor-openapi.js';

/**
 * The route modules' parts of the document. A module that serves under the prefix adds its
 * contribution here (its schemas and entries in a module without Hono, as src/server/api-openapi.ts).
 */
export const CONTRIBUTIONS: readonly OpenApiContribution[] = [API_OPENAPI, WATCHLISTS_OPENAPI, PUSH_OPENAPI, KNOWLEDGE_OPENAPI, DOCTOR_OPENAPI];

export type OpenApiDocument = Record<string, unknown> & { openapi: string; paths: Record<string, Record<string, unknown>> };

/** The answers every endpoint under the prefix may give, whatever it does (components.responses). */
const SHARED: Record<number, { name: string; response: OpenApiResponse }> = {
  401: {
    name: 'Unauthorized',
    response: {
      description: 'The token is missing or is no token of this server (when `api_token` is set, users exist, or a trusted proxy signs people in).',
      body: { schema: errorSchema, example: { error: 'authentication required: send your token as "Authorization: Bearer <token>" or "X-API-Key: <token>" (setting api_token, or oas users add), or sign in at /signin' } },
      headers: { 'WWW-Authenticate': '`Bearer`.' },
    },
  },
  421: {
    name: 'Misdirected',
    response: {
      description: 'The request names a Host this server does not answer for (setting allowed_hosts).',
      body: { schema: errorSchema, example: { error: 'misdirected request: this server does not answer for the Host this request names; add the name to allowed_hosts (OAS_ALLOWED_HOSTS) if it is one of its own' } },
    },
  },
  429: {
    name: 'TooManyFailures',
    response: {
      description: 'Too many bad tokens or failed sign-ins from this address (setting auth_failures_per_minute).',
      body: { schema: errorSchema, example: { error: 'too many failed sign-ins or bad tokens from this address: at most 10 a minute (setting auth_failures_per_minute); retry in 42 s' } },
      headers: { 'Retry-After': 'Seconds to wait before trying again.' },
    },
  },
  500: {
    name: 'InternalError',
    response: { description: 'An unexpected error; the server logs it, the answer says no more.', body: { schema: errorSchema, example: { error: 'internal error' } } },
  },
  503: {
    name: 'Unavailable',
    response: {
      description: 'With `redis_url`: Redis does not answer; retry after Retry-After.',
      body: { schema: errorSchema, example: { error: 'Redis at redis://redis:6379 is unreachable: analyses are unavailable until it is back' } },
      headers: { 'Retry-After': 'Seconds to wait before trying again.' },
    },
  },
};

const FORBIDDEN: OpenApiResponse = {
  description: 'The token\'s user has a role below the one this endpoint needs (oas users), or a browser session posted from another site.',
  body: { schema: errorSchema, example: { error: 'forbidden: alice is a viewer; starting analyses needs the analyst or admin role (oas users)' } },
};

const ROLE_LINE = { viewer: 'Any role may call it (viewer, analyst, admin).', analyst: 'Needs the analyst or admin role.', admin: 'Needs the admin role.' };

/** The document for the API served under `prefix` (normalised, as `/api/`). */
export function openApiDocument(prefix: string, contributions: readonly OpenApiContribution[] = CONTRIBUTIONS): OpenApiDocument {
  const named: Record<string, GenericSchema> = {};
  for (const contribution of contributions) {
    for (const [name, schema] of Object.entries(contribution.schemas)) {
      if (name in named) throw new Error(`OpenAPI: two schemas named ${name}`);
      named[name] = schema;
    }
  }
  const config: ConversionConfig = {
    target: 'draft-2020-12',
    definitions: named,
    overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
    // Trimming changes no type: the document says the string's other rules (JSON Schema cannot trim).
    ignoreActions: ['trim'],
    // A form's file part: bytes (OpenAPI 3.1 says a binary part so).
    overrideSchema: ({ valibotSchema }) => (valibotSchema.type === 'file' || valibotSchema.type === 'blob' ? { type: 'string', contentMediaType: 'application/octet-stream' } : undefined),
  };
  const schemaOf = (schema: GenericSchema): JsonSchema => bare(toJsonSchema(schema, config));
  const componentSchemas = Object.fromEntries(Object.entries(toJsonSchemaDefs(named, config)).map(([name, schema]) => [name, bare(schema)]));

  const paths: Record<string, Record<string, unknown>> = {};
  const used = new Set<number>();
  for (const entry of contributions.flatMap((c) => c.entries)) {
    const path = `${prefix}${entry.path}`;
    const operations = (paths[path] ??= {});
    if (entry.method in operations) throw new Error(`OpenAPI: two entries for ${entry.method.toUpperCase()} ${path}`);
    operations[entry.method] = operation(entry, schemaOf, used);
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'oas: Observable Analysis Service',
      version: VERSION,
      description: [
        'Look up domains, IPs, URLs, hashes and e-mail addresses in intelligence and network sources.',
        `Every endpoint is under the prefix \`${prefix}\` (setting api_prefix) and answers JSON; every error is \`{"error": "..."}\`, one line saying what to fix.`,
        'Start an analysis with POST analyze, poll is_analysis_complete until it says true, then read results.',
        'Authentication: the API token (setting api_token) or a user\'s token (oas users), as `Authorization: Bearer <token>` or `X-API-Key: <token>`. A server with neither token nor users listens on the loopback only and asks for none.',
      ].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: contributions.flatMap((c) => c.tags ?? []),
    security: [{ bearerAuth: [] }, { apiKey: [] }],
    paths,
    components: {
      schemas: componentSchemas,
      responses: Object.fromEntries([...used].sort().map((status) => [SHARED[status]!.name, response(SHARED[status]!.response, schemaOf)])),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API token (setting api_token) or a user\'s token (oas users add).' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The same token, in a header of its own.' },
      },
    },
  };
}

function operation(entry: OpenApiEntry, schemaOf: (schema: GenericSchema) => JsonSchema, used: Set<number>): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  const own: Record<number, OpenApiResponse> = { ...entry.responses };
  if (entry.role !== 'viewer') own[403] ??= FORBIDDEN;
  const statuses = [...new Set([...Object.keys(own), ...Object.keys(SHARED)].map(Number))].sort((a, b) => a - b);
  for (const status of statuses) {
    const mine = own[status];
    const shared = SHARED[status];
    if (mine && shared) {
      // Both: the endpoint's own reason first, then the shared one.
      responses[status] = response({ ...mine, description: `${mine.description} Or: ${shared.response.description.replace(/^[A-Z](?=[a-z ])/, (c) => c.toLowerCase())}`, headers: { ...shared.response.headers, ...mine.headers } }, schemaOf);
    } else if (mine) {
      responses[status] = response(mine, schemaOf);
    } else if (shared) {
      used.add(status);
      responses[status] = { $ref: `#/components/responses/${shared.name}` };
    }
  }
  return {
    operationId: entry.operationId,
    summary: entry.summary,
    description: [entry.description, ROLE_LINE[entry.role]].filter(Boolean).join('\n\n'),
    tags: entry.tags,
    ...(entry.params
      ? { parameters: Object.entries(entry.params).map(([name, p]) => ({ name, in: 'path', required: true, description: p.description, schema: { type: 'string' }, example: p.example })) }
      : {}),
    ...(entry.requestBody
      ? {
        requestBody: {
          required: true,
          ...(entry.requestBody.description ? { description: entry.requestBody.description } : {}),
          content: Object.fromEntries(Object.entries(entry.requestBody.content).map(([type, body]) => [type, media(body, schemaOf)])),
        },
      }
      : {}),
    responses,
  };
}

function response(answer: OpenApiResponse, schemaOf: (schema: GenericSchema) => JsonSchema): Record<string, unknown> {
  return {
    description: answer.description,
    ...(answer.headers
      ? { headers: Object.fromEntries(Object.entries(answer.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) }
      : {}),
    content: { 'application/json': media(answer.body, schemaOf) },
  };
}

function media(body: OpenApiBody, schemaOf: (schema: GenericSchema) => JsonSchema): Record<string, unknown> {
  return { schema: schemaOf(body.schema), ...(body.example !== undefined ? { example: body.example } : {}) };
}

/** A converted schema without what a schema inside the document has no use for (its dialect, the copies of the components). */
function bare(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, $defs: _defs, ...rest } = schema as JsonSchema & { $defs?: unknown };
  return rest;
}
