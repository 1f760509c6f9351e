/** Country names for two-letter codes, from the ICU data built into Node. */

/** Built on first use: loading the ICU region names costs ~30 ms, which start-up need not pay. */
let regionNames: Intl.DisplayNames | undefined;

/** English name of a two-letter country code ("US" → "United States"), or "Unknown". */
export function countryName(code: string | null | undefined): string {
  const text = code?.trim().toUpperCase() ?? '';
  if (!/^[A-Z]{2}$/.test(text)) return UNKNOWN;
  regionNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const name = regionNames.of(text);
  return name && name !== 'Unknown Region' ? name : UNKNOWN;
}

/** What the reference's results say for an unknown value. */
export const UNKNOWN = 'Unknown';
