/**
 * JSON Pointers (RFC 6901) for a custom engine's `fields`: `/data/attributes/score` names a value
 * of the upstream's JSON answer, `""` the whole answer. The URI fragment form (`#/data/score`,
 * percent-encoded) is accepted too.
 */

/** A parsed pointer: its reference tokens, unescaped. */
export type Pointer = readonly string[];

/** The tokens of a pointer, or undefined when the text is not a JSON Pointer. */
export function parsePointer(text: string): Pointer | undefined {
  let body = text;
  if (body.startsWith('#')) {
    try {
      body = decodeURIComponent(body.slice(1));
    } catch {
      return undefined;
    }
  }
  if (body === '') return [];
  if (!body.startsWith('/')) return undefined;
  const tokens: string[] = [];
  for (const raw of body.slice(1).split('/')) {
    // `~` only as `~0` (a tilde) or `~1` (a slash).
    if (/~(?![01])/.test(raw)) return undefined;
    tokens.push(raw.replaceAll('~1', '/').replaceAll('~0', '~'));
  }
  return tokens;
}

/** The value a pointer names in a JSON document, or undefined when the document has none there. */
export function resolvePointer(document: unknown, pointer: Pointer): unknown {
  let current: unknown = document;
  for (const token of pointer) {
    if (Array.isArray(current)) {
      // An array index: `0` or digits without a leading zero (`-` names no existing element).
      if (!/^(0|[1-9]\d*)$/.test(token)) return undefined;
      current = current[Number(token)];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
    if (current === undefined) return undefined;
  }
  return current;
}
