/**
 * Words the push targets share (issue 37): where a platform is, as their one-line messages name
 * it (`MISP at misp.example.org: ...`), and counts (`3 observables`).
 */
import { clip, plainText } from '../export/common.js';

/** The platform's `host:port` from its base URL (the URL itself, made plain and short, when it is none). */
export function platformHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return clip(plainText(url), 80);
  }
}

/** `1 observable`, `3 observables`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
