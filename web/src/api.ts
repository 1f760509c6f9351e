/**
 * Requests to oas: the spec's three endpoints under the configured prefix, and the JSON the pages
 * read besides them (/ui/...). Every failure becomes an ApiError with a message fit to show.
 */
export class ApiError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

/** The API prefix the server was started with, e.g. `/api/`. */
export const apiPrefix = document.body.dataset['apiPrefix'] ?? '/api/';

export function apiPath(path: string): string {
  return `${apiPrefix}${path}`;
}

async function request<T>(path: string, init?: RequestInit): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers: { accept: 'application/json', ...init?.headers }, cache: 'no-store' });
  } catch {
    throw new ApiError('oas did not answer: is the server still running?', 0);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`oas answered ${response.status} without JSON`, response.status);
  }
  if (!response.ok) {
    const error = typeof body === 'object' && body !== null && 'error' in body ? String((body as { error: unknown }).error) : `HTTP ${response.status}`;
    throw new ApiError(error, response.status);
  }
  return body as T;
}

export function getJson<T>(path: string): Promise<T> {
  return request<T>(path);
}

export function postJson<T>(path: string, body: unknown): Promise<T> {
  return request<T>(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
