/**
 * What bash's and zsh's completion scripts share, as shell functions both read alike: the tables
 * (the subcommands and options of each command, the kind of each option's value and of each
 * positional argument, the fixed lists of words; every word single-quoted, so that nothing in it
 * is expanded, whatever it holds) and the asking of `oas completion --list`.
 */
import { argumentKinds, optionValueKinds, SAFE_WORD, shQuote, type CompletionSpec } from './completion-spec.js';

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
  return [
    ...arrays('__oas_subcommands', 'the subcommands of the command $1 (oas, oas users...)', spec.commands.map((c) => [c.path, c.subcommands])),
    ...arrays('__oas_options', 'the options of the command $1', spec.commands.map((c) => [c.path, c.options.flatMap((o) => o.names)])),
    ...arrays('__oas_words', 'the words of the kind $1', Object.entries(spec.lists)),
    ...kinds('__oas_option_value', 'the kind of the value of the option $2 of the command $1; empty when it takes none', "''", optionValueKinds(spec, shQuote, '|')),
    ...kinds('__oas_argument', 'the kind of the positional argument $2 (from 0) of the command $1', 'text', argumentKinds(spec, shQuote)),
  ].join('\n');
}

/**
 * `__oas_walk` (the command line up to the cursor), `__oas_remember` (the configuration and
 * catalog the command line names) and `__oas_list` (what
 * `oas completion --list` answers for them, each line checked against SAFE_WORD again, into
 * __oas_r; never evaluated).
 */
export function shHelpers(): string {
  return `__oas_has() {
  local word="$1" w
  shift
  for w in "$@"; do [[ $w == "$word" ]] && return 0; done
  return 1
}

# walks the words between the command's name and the cursor ($@): the command (cmdpath), the
# positional argument the cursor is at (pos), whether -- ended the options (ended), and the option
# whose value the cursor is at (expect)
__oas_walk() {
  local w
  for w in "$@"; do
    if [[ -n $expect ]]; then __oas_remember "$expect" "$w"; expect=''; continue; fi
    if ((!ended)); then
      case "$w" in
        --) ended=1; continue ;;
        --*=*) __oas_remember "\${w%%=*}" "\${w#*=}"; continue ;;
        -?*) __oas_option_value "$cmdpath" "$w"; [[ -n $__oas_k ]] && expect="$w"; continue ;;
      esac
    fi
    __oas_subcommands "$cmdpath"
    if ((!ended)) && __oas_has "$w" "\${__oas_r[@]}"; then cmdpath+=" $w"; pos=0; else pos=$((pos + 1)); fi
  done
  return 0
}

# an option's value the --list helper needs: the configuration and catalog the command line names
__oas_remember() {
  case "$1" in
    -c|--config) __oas_config="$2"; [[ $__oas_config == '~/'* ]] && __oas_config="$HOME/\${__oas_config#'~/'}" ;;
    --catalog) __oas_catalog="$2" ;;
  esac
  return 0
}

# engines or sets, as \`oas completion --list $1\` gives them for that configuration (each word
# checked again); the built-in engines when it gives none
__oas_list() {
  local line safe=${shQuote(SAFE_WORD.source)}
  local -a args
  args=(completion --list "$1")
  [[ -n $__oas_config ]] && args+=(--config "$__oas_config")
  [[ -n $__oas_catalog ]] && args+=(--catalog "$__oas_catalog")
  __oas_r=()
  while IFS= read -r line; do
    # $safe unquoted: a regular expression
    [[ $line =~ $safe ]] && __oas_r+=("$line")
  done < <("$__oas_cmd" "\${args[@]}" 2>/dev/null </dev/null)
  if ((\${#__oas_r[@]} == 0)) && [[ $1 == engines ]]; then __oas_words engines; fi
  return 0
}`;
}
