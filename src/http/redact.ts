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
  return maskForms(text, secretForms(secrets));
}

/** Each secret of 4 characters or more and its URL-encoded form, the longest first. */
function secretForms(secrets: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

function maskForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(MASK);
  return out;
}

/**
 * The known secrets first, then credential-looking URL parameters: masking a parameter first
 * would cut a secret that holds `&key=` in two, and the part before it would no longer be found.
 */
export function redact(text: string, secrets: Iterable<string> = []): string {
  return maskUrlSecrets(maskKnownSecrets(text, secrets));
}

/**
 * `redact` with a fixed list of secrets, their forms found once (a log writing many lines with
 * the same secrets); a text without `=` has no URL parameter to mask.
 */
export function redactor(secrets: Iterable<string>): (text: string) => string {
  const forms = secretForms(secrets);
  return (text) => {
    const masked = maskForms(text, forms);
    return masked.includes('=') ? maskUrlSecrets(masked) : masked;
  };
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
