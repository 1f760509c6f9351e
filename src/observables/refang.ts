/**
 * Refanging: turn defanged indicators (`hxxps://evil[.]com`, `user[at]example[.]com`) back
 * into live ones so that extraction can recognise them.
 *
 * The rules are deliberately conservative: only bracketed or escaped separators and obvious
 * scheme mangling are rewritten, never bare words like "dot" or " at ", so ordinary prose is
 * left alone. Optional spaces are bounded (`{0,3}`) rather than `*`, so that a long run of
 * blanks cannot make a leading-space pattern quadratic.
 */

const SP = '[ \\t]{0,3}';

/** A token wrapped in a matching pair of (), [] or {} with optional inner spaces. */
function bracketed(inner: string): string {
  return `(?:\\[${SP}(?:${inner})${SP}\\]|\\(${SP}(?:${inner})${SP}\\)|\\{${SP}(?:${inner})${SP}\\})`;
}

/** Ordered: schemes are fixed before `[http]` is unwrapped, escapes before bracket rules. */
const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  // JSON-style and regex-style escapes: `http:\/\/x`, `evil\.com`.
  [/\\\//g, '/'],
  [/\\\./g, '.'],
  // hxxp, hXXp, h**p, h__p (+s) -> http(s). Whole word only, so "hxxpfoo" is untouched.
  [/(?<![A-Za-z0-9])h(?:xx|\*\*|__)p(?![A-Za-z0-9])/gi, 'http'],
  [/(?<![A-Za-z0-9])h(?:xx|\*\*|__)ps(?![A-Za-z0-9])/gi, 'https'],
  // [http] / [https] -> http / https.
  [/\[(https?)\]/gi, '$1'],
  // [://] and [:] -> :// and :
  [/\[(:\/\/|:)\]/g, '$1'],
  // [.] (.) {.} [dot] (DOT) [,] ... -> "." with the spaces around them dropped
  // ("example [.] com" -> "example.com"; "1[,]2[,]3[,]4" -> "1.2.3.4").
  [new RegExp(`${SP}${bracketed('\\.|,|dot')}${SP}`, 'gi'), '.'],
  // [at] (at) {at} [@] (@) [AT] -> "@", spaces around removed.
  [new RegExp(`${SP}${bracketed('at|@')}${SP}`, 'gi'), '@'],
  // [/] -> /
  [/\[\/\]/g, '/'],
];

/** Rewrites defanged indicators in `text` into their live form; other text is unchanged. */
export function refang(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}
