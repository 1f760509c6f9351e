/**
 * The links in event bodies (issue 36): absolute with the setting `public_url` (the server's address
 * as people reach it), else paths (`/results/<id>`), which a receiver joins to the address it knows.
 */

/** The results page of analysis `id`. */
export function resultsLink(publicUrl: string, id: string): string {
  return `${publicUrl.trim().replace(/\/+$/, '')}/results/${encodeURIComponent(id)}`;
}

/**
 * `link` as the URL parser writes it when it is an absolute http(s) URL, else undefined (a path,
 * `javascript:`...): the link back a push writes into a platform (src/push/).
 */
export function httpUrl(link: string): string | undefined {
  try {
    const url = new URL(link);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `link` is absolute (a chat button needs one: Slack and Teams refuse a path). */
export function isAbsolute(link: string): boolean {
  return /^https?:\/\//i.test(link);
}
