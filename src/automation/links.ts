/**
 * The links in event bodies (issue 36): absolute with the setting `public_url` (the server's address
 * as people reach it), else paths (`/results/<id>`), which a receiver joins to the address it knows.
 */

/** The results page of analysis `id`. */
export function resultsLink(publicUrl: string, id: string): string {
  return `${publicUrl.trim().replace(/\/+$/, '')}/results/${encodeURIComponent(id)}`;
}

/** Whether `link` is absolute (a chat button needs one: Slack and Teams refuse a path). */
export function isAbsolute(link: string): boolean {
  return /^https?:\/\//i.test(link);
}
