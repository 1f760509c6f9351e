/**
 * Requests to oas: the spec's three endpoints under the configured prefix, and the JSON the pages
 * read besides them (/ui/...). Every failure becomes an ApiError with a message fit to show.
 *
 * When the server has an API token (`data-auth` on <body>), the browser holds a session cookie
 * (HttpOnly: no script ever sees the token or the session); a 401 sends the page to /signin, which
 * comes back here afterwards, and the header gets a sign-out link. Nothing secret goes in a URL.
 */
export class ApiError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

/** The API prefix the server was started with, e.g. `/api/`. */
export const apiPrefix = document.body.dataset['apiPrefix'] ?? '/api/';

/** Whether the server asks for a token (setting api_token). */
export const authEnabled = document.body.dataset['auth'] === 'token';

if (authEnabled) {
  const signOut = document.createElement('a');
  signOut.href = '/signout';
  signOut.className = 'signout';
  signOut.id = 'signout';
  signOut.textContent = 'Sign out';
  document.querySelector('.topbar')?.appendChild(signOut);
}

/** The sign-in page, which brings the user back to this page (its path only) afterwards. */
export function signInHref(): string {
  return `/signin?next=${encodeURIComponent(window.location.pathname + window.location.search)}`;
}

export function goToSignIn(): void {
  window.location.assign(signInHref());
}

export function apiPath(path: string): string {
  return `${apiPrefix}${path}`;
}

/**
 * `signIn: false`: a 401 is thrown like any other refusal, without leaving the page (the form
 * says so next to its button and keeps what was typed).
 */
async function request<T>(path: string, init?: RequestInit, options: { signIn?: boolean } = {}): Promise<T> {
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
  if (response.status === 401 && options.signIn !== false) {
    goToSignIn();
    throw new ApiError('Sign in to continue: opening the sign-in page…', 401);
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

export function postJson<T>(path: string, body: unknown, options: { signIn?: boolean } = {}): Promise<T> {
  return request<T>(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, options);
}

/** A multipart/form-data POST (a file with its fields); the browser writes the content type and its boundary. */
export function postForm<T>(path: string, form: FormData, options: { signIn?: boolean } = {}): Promise<T> {
  return request<T>(path, { method: 'POST', body: form }, options);
}

/** A DELETE (removing a watchlist); the answer's JSON. */
export function deleteJson<T>(path: string, options: { signIn?: boolean } = {}): Promise<T> {
  return request<T>(path, { method: 'DELETE' }, options);
}
