/**
 * `oas completion bash`: the completion function `_oas`, registered with `complete -F`. It walks
 * the words before the cursor (options and their values, subcommands, positional arguments) with
 * the tables of src/cli/completion-tables.ts, then proposes what fits where the cursor is. The
 * words it proposes are filtered by prefix in the shell (never `compgen -W`, which would expand
 * them), and what `oas completion --list` answers is checked against SAFE_WORD again.
 */
import type { CompletionSpec } from './completion-spec.js';
import { shHelpers, shTables } from './completion-tables.js';
import { VERSION } from './version.js';

export function bashScript(spec: CompletionSpec): string {
  return `# bash completion for oas ${VERSION}, written by \`oas completion bash\` (docs/completion.md).
# Install: oas completion bash > ~/.local/share/bash-completion/completions/oas
# or, for this shell only: source <(oas completion bash)

${shTables(spec)}

${shHelpers()}

# the words ($3...) that start with $1, each after $2
__oas_propose() {
  local cur="$1" head="$2" w
  shift 2
  for w in "$@"; do [[ $w == "$cur"* ]] && COMPREPLY+=("$head$w"); done
  return 0
}

# the values of the kind $1 that start with $2
__oas_value() {
  local kind="$1" cur="$2" head='' w flag=-f
  case "$kind" in
    files|dirs)
      [[ $kind == dirs ]] && flag=-d
      compopt -o filenames 2>/dev/null
      while IFS= read -r w; do COMPREPLY+=("$w"); done < <(compgen "$flag" -- "$cur")
      return 0 ;;
    engines|sets)
      # a comma-separated list: the last name is completed, after the ones before it
      head="\${cur%"\${cur##*,}"}"
      cur="\${cur##*,}"
      __oas_list "$kind" ;;
    commands) __oas_subcommands "\${cmdpath% help}" ;;
    text|'') return 0 ;;
    *) __oas_words "$kind" ;;
  esac
  __oas_propose "$cur" "$head" "\${__oas_r[@]}"
}

_oas() {
  local __oas_cmd="\${COMP_WORDS[0]}" __oas_config='' __oas_catalog='' __oas_k='' cmdpath=oas expect='' w i pos=0 ended=0 glue=0
  local -a __oas_r=() words=()
  COMPREPLY=()
  # bash splits "--engines=x" at "=" (COMP_WORDBREAKS): such words are put together again
  for ((i = 0; i <= COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if ((glue)); then
      words[\${#words[@]}-1]+="$w"; glue=0
    elif [[ $w == '=' && \${#words[@]} -gt 1 && \${words[\${#words[@]}-1]} == -?* && \${words[\${#words[@]}-1]} != *=* ]]; then
      words[\${#words[@]}-1]+='='; glue=1
    else
      words+=("$w")
    fi
  done
  local last=$((\${#words[@]} - 1))
  local cur="\${words[last]}"
  __oas_walk "\${words[@]:1:last-1}"
  if [[ -n $expect ]]; then
    __oas_option_value "$cmdpath" "$expect"
  elif ((!ended)) && [[ $cur == --*=* ]]; then
    # readline completes what follows the "="
    __oas_option_value "$cmdpath" "\${cur%%=*}"
    cur="\${cur#*=}"
  elif ((!ended)) && [[ $cur == -* ]]; then
    __oas_options "$cmdpath"
    __oas_propose "$cur" '' "\${__oas_r[@]}"
    return 0
  else
    __oas_subcommands "$cmdpath"
    if ((\${#__oas_r[@]} > 0)); then __oas_propose "$cur" '' "\${__oas_r[@]}"; return 0; fi
    __oas_argument "$cmdpath" "$pos"
  fi
  __oas_value "$__oas_k" "$cur"
}

complete -F _oas oas
`;
}

