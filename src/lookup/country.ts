/** Country names for two-letter codes, from the ICU data built into Node. */

const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/** English name of a two-letter country code ("US" → "United States"), or "Unknown". */
export function countryName(code: string | null | undefined): string {
  const text = code?.trim().toUpperCase() ?? '';
  if (!/^[A-Z]{2}$/.test(text)) return UNKNOWN;
  const name = REGION_NAMES.of(text);
  return name && name !== 'Unknown Region' ? name : UNKNOWN;
}

/** What the reference's results say for an unknown value. */
export const UNKNOWN = 'Unknown';
