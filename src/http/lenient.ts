/**
 * Lenient pieces for upstream answer schemas: what an engine reads when present, with the
 * documented default when the upstream leaves it out or sends an empty value in another form.
 * Real services omit fields, send `0` or `""` for false, `null` for an empty list, or one object
 * where a one-element list was expected; none of that should turn an answer into an engine error.
 * Leniency is for what is absent or unreadable as the expected type: a value that is there is
 * returned as sent (`text()` keeps `""`, issue 32).
 * A value that cannot be understood at all (an object where a number belongs) still fails, with
 * the path of the field, through `parseWith`.
 *
 * Each helper is wrapped in `v.optional(..., default)`, so it can stand directly as an entry of
 * `jsonObject({...})` / `v.looseObject({...})`.
 */
import * as v from 'valibot';

const FALSE_WORDS = new Set(['', '0', 'false', 'no', 'n', 'off', 'null', 'none']);
const TRUE_WORDS = new Set(['1', 'true', 'yes', 'y', 'on']);

/** A boolean sent as `true`/`false`, `1`/`0`, `"true"`/`"false"`, `"1"`/`"0"`, `""`, or null: absent → false. */
export function flag() {
  return v.optional(v.pipe(flagOrNullValue(), v.transform((value): boolean => value ?? false)), false);
}

/**
 * A boolean read as `flag()` reads it when the upstream gives one; absent or null → null (the
 * upstream says nothing). `""` and `0` are still false.
 */
export function flagOrNull() {
  return v.optional(flagOrNullValue(), null);
}

/** A present boolean in any of the forms `flag()` reads, null kept as null. */
function flagOrNullValue() {
  return v.pipe(
    v.nullable(v.union([v.boolean(), v.number(), v.string()])),
    v.check(
      (value) => typeof value !== 'string' || FALSE_WORDS.has(value.trim().toLowerCase()) || TRUE_WORDS.has(value.trim().toLowerCase()),
      'expected a boolean',
    ),
    v.transform((value): boolean | null => {
      if (value === null) return null;
      if (typeof value === 'string') return TRUE_WORDS.has(value.trim().toLowerCase());
      return Boolean(value);
    }),
  );
}

/** A number sent as a number or a numeric string; absent, null or `""` → `fallback` (0). */
export function num(fallback = 0) {
  return v.optional(v.pipe(numberOrNullValue(), v.transform((value): number => value ?? fallback)), fallback);
}

/** A number when the upstream gives one, else null (absent, null, `""`). */
export function numOrNull() {
  return v.optional(numberOrNullValue(), null);
}

/** A present number as `num()` reads it, null and `""` as null. */
function numberOrNullValue() {
  return v.pipe(
    v.nullable(v.union([v.number(), v.string()])),
    v.check((value) => typeof value !== 'string' || value.trim() === '' || Number.isFinite(Number(value)), 'expected a number'),
    v.transform((value): number | null => (value === null || (typeof value === 'string' && value.trim() === '') ? null : Number(value))),
  );
}

/**
 * A string when present, kept as sent, `""` included (a number is taken as its text: `0` → `"0"`);
 * absent or null → null. `""` is a value the upstream sent (issue 32): an engine that wants to
 * show "nothing" for it decides so itself.
 */
export function text() {
  return v.optional(
    v.pipe(
      v.nullable(v.union([v.string(), v.number()])),
      v.transform((value): string | null => (value === null ? null : String(value))),
    ),
    null,
  );
}

/**
 * A list of `item`: absent, null, `""` or `{}` → `[]`; one item in place of a list → a list of it;
 * null items are dropped. Items that are present but malformed still fail.
 */
export function list<S extends v.GenericSchema>(item: S) {
  return v.optional(
    v.pipe(
      v.unknown(),
      v.transform((value): unknown[] => {
        if (value === null || value === undefined || value === '') return [];
        if (Array.isArray(value)) return value.filter((entry) => entry !== null && entry !== undefined);
        if (typeof value === 'object' && Object.keys(value).length === 0) return [];
        return [value];
      }),
      v.array(item),
    ),
    [],
  );
}
