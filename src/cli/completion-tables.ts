/**
 * The tables of a completion script, as shell functions bash and zsh read alike (the same `case`
 * syntax): the subcommands and options of each command, the kind of each option's value and of
 * each positional argument, and the fixed lists of words. Every word is single-quoted: nothing in
 * it is expanded, whatever it holds.
 */
import { shQuote, type CompletionSpec } from './completion-spec.js';

/** The functions `__oas_subcommands`, `__oas_options`, `__oas_words` (into the array __oas_r), `__oas_option_value` and `__oas_argument` (into __oas_k). */
export function shTables(spec: CompletionSpec): string {
  const words = (list: readonly string[]) => list.map(shQuote).join(' ');
  const arrays = (name: string, comment: string, entries: [string, readonly string[]][]) => [
    `# ${comment}`,
    `${name}() {`,
    '  case "$1" in',
    ...entries.filter(([, list]) => list.length > 0).map(([key, list]) => `    ${shQuote(key)}) __oas_r=(${words(list)}) ;;`),
    '    *) __oas_r=() ;;',
    '  esac',
    '}',
  ];
  const kinds = (name: string, comment: string, fallback: string, entries: [string, string][]) => [
    `# ${comment}`,
    `${name}() {`,
    '  case "${1}:${2}" in',
    ...entries.map(([pattern, kind]) => `    ${pattern}) __oas_k=${shQuote(kind)} ;;`),
    `    *) __oas_k=${fallback} ;;`,
    '  esac',
    '}',
  ];
  const optionValues: [string, string][] = spec.commands.flatMap((c) => c.options
    .filter((o) => o.value !== undefined)
    .map((o): [string, string] => [o.names.map((n) => shQuote(`${c.path}:${n}`)).join('|'), o.value!]));
  // Positional n of a command; the last, when variadic, for any n from there.
  const argumentKinds: [string, string][] = spec.commands
    .filter((c) => c.args.some((kind) => kind !== 'text'))
    .flatMap((c) => c.args.map((kind, i): [string, string] => [c.variadic && i === c.args.length - 1 ? `${shQuote(`${c.path}:`)}*` : shQuote(`${c.path}:${i}`), kind]));
  return [
    ...arrays('__oas_subcommands', 'the subcommands of the command $1 (oas, oas users...)', spec.commands.map((c) => [c.path, c.subcommands])),
    ...arrays('__oas_options', 'the options of the command $1', spec.commands.map((c) => [c.path, c.options.flatMap((o) => o.names)])),
    ...arrays('__oas_words', 'the words of the kind $1', Object.entries(spec.lists)),
    ...kinds('__oas_option_value', 'the kind of the value of the option $2 of the command $1; empty when it takes none', "''", optionValues),
    ...kinds('__oas_argument', 'the kind of the positional argument $2 (from 0) of the command $1', 'text', argumentKinds),
  ].join('\n');
}
