/** Masking of secrets in anything that may be shown: URLs, error messages, log lines. */

/** Query parameters whose values are credentials by name. */
const SENSITIVE_PARAMS = /^(key|apikey|api_key|api-key|token|access_token|auth|auth_key|password|passwd|secret|client_secret|cx|sig|signature)$/i;

export const MASK = '***';

/** Replaces the values of credential-like query parameters in every URL found in `text`. */
export function maskUrlSecrets(text: string): string {
  return text.replace(/([?&])([^=&#\s]+)=([^&#\s]*)/g, (whole, sep: string, name: string, value: string) =>
    SENSITIVE_PARAMS.test(decodeSafe(name)) && value !== '' ? `${sep}${name}=${MASK}` : whole,
  );
}

/**
 * Replaces every occurrence of each known secret (and its URL-encoded form) in `text`, the longest
 * first: a form masked first could otherwise cut a longer one that holds it, leaving its rest.
 */
export function maskKnownSecrets(text: string, secrets: Iterable<string>): string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
  }
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(MASK);
  return out;
}

/**
 * The known secrets first, then credential-looking URL parameters: masking a parameter first
 * would cut a secret that holds `&key=` in two, and the part before it would no longer be found.
 */
export function redact(text: string, secrets: Iterable<string> = []): string {
  return maskUrlSecrets(maskKnownSecrets(text, secrets));
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
