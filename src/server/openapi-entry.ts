/**
 * What a route module tells the OpenAPI document about its endpoints (issue 36): one entry per
 * route under the prefix, with the valibot schemas the route validates with and answers in, its
 * statuses and examples. A module's entries sit in a module of their own, beside its schemas and
 * without Hono (src/server/api-openapi.ts for src/server/api.ts), so `oas openapi` builds the
 * document without the server; src/server/openapi.ts lists the contributions and builds it.
 */
import type { GenericSchema } from 'valibot';
import type { Role } from '../store/users.js';
import { errorSchema } from './api-schemas.js';

/** A body of one media type: its schema, and an example that the tests check against it. */
export interface OpenApiBody {
  schema: GenericSchema;
  example?: unknown;
}

export interface OpenApiResponse {
  /** When it is given, in one line or two. */
  description: string;
  /** Its JSON body (every answer under the prefix is JSON). */
  body: OpenApiBody;
  /** Headers it carries (e.g. `Retry-After`), name -> description. */
  headers?: Record<string, string>;
}

/** An `{"error": ...}` answer: when it is given, an example of its one line, and its headers if any. */
export function errorResponse(description: string, example: string, headers?: Record<string, string>): OpenApiResponse {
  return { description, body: { schema: errorSchema, example: { error: example } }, ...(headers ? { headers } : {}) };
}

export interface OpenApiEntry {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The path under the prefix, path parameters in braces: `results/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /**
   * The role it needs (src/server/auth.ts roleFor): an analyst's or admin's entry gets a 403 of
   * its own. Every entry is behind the token (401) and the shared answers (429, 503, 500).
   */
  role: Role;
  /** Path parameters: name -> description and example. */
  params?: Record<string, { description: string; example: string }>;
  /** Request bodies by media type (`application/json`, `multipart/form-data`). */
  requestBody?: { description?: string; content: Record<string, OpenApiBody> };
  /** The answers it gives itself, by status; the shared ones are added by the document. */
  responses: Record<number, OpenApiResponse>;
}

/** A route module's part of the document: its named schemas (the document's components) and its endpoints. */
export interface OpenApiContribution {
  /** Name -> schema; an endpoint's schema that is one of these is a `$ref` to it. */
  schemas: Record<string, GenericSchema>;
  entries: OpenApiEntry[];
  /** Its tags, described. */
  tags?: { name: string; description: string }[];
}
