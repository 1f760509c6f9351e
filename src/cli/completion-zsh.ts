/**
 * `oas completion zsh`: the completion function `_oas`, for the fpath (`#compdef oas`) or sourced
 * (it then calls compdef). The same walk of the words as bash's (src/cli/completion-bash.ts) over
 * the same tables; zsh's compadd, _files and compset do the matching and quoting.
 */
import type { CompletionSpec } from './completion-spec.js';
import { shHelpers, shTables } from './completion-tables.js';
import { VERSION } from './version.js';

export function zshScript(spec: CompletionSpec): string {
  return `#compdef oas
# zsh completion for oas ${VERSION}, written by \`oas completion zsh\` (docs/completion.md).
# Install: oas completion zsh > ~/.zfunc/_oas, with fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc
# or, for this shell only: source <(oas completion zsh)

${shTables(spec)}

${shHelpers()}

_oas() {
  local __oas_cmd="\${words[1]}" __oas_config='' __oas_catalog='' __oas_k='' cmdpath=oas expect='' cur="\${words[CURRENT]}"
  local -a __oas_r
  local -i pos=0 ended=0
  __oas_walk "\${(@)words[2,CURRENT-1]}"
  if [[ -n $expect ]]; then
    __oas_option_value "$cmdpath" "$expect"
  elif (( ! ended )) && [[ $cur == --*=* ]]; then
    __oas_option_value "$cmdpath" "\${cur%%=*}"
    compset -P '*='
  elif (( ! ended )) && [[ $cur == -* ]]; then
    __oas_options "$cmdpath"
    compadd -- "\${__oas_r[@]}"
    return
  else
    __oas_subcommands "$cmdpath"
    if (( \${#__oas_r} > 0 )); then compadd -- "\${__oas_r[@]}"; return; fi
    __oas_argument "$cmdpath" "$pos"
  fi
  case "$__oas_k" in
    files) _files ;;
    dirs) _files -/ ;;
    engines|sets)
      # a comma-separated list: the last name is completed, after the ones before it
      compset -P '*,'
      __oas_list "$__oas_k"
      compadd -- "\${__oas_r[@]}" ;;
    commands) __oas_subcommands "\${cmdpath% help}"; compadd -- "\${__oas_r[@]}" ;;
    text|'') return 1 ;;
    *) __oas_words "$__oas_k"; compadd -- "\${__oas_r[@]}" ;;
  esac
}

if [[ "\${funcstack[1]-}" == _oas ]]; then
  _oas "$@"
else
  compdef _oas oas
fi
`;
}
