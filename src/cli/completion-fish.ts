/**
 * `oas completion fish`: one dynamic completion, `__oas_complete`, that walks the tokens before
 * the cursor as bash's does (src/cli/completion-bash.ts) over the same tables written as fish
 * functions (each word single-quoted for fish), and prints what fits the current token.
 */
import { argumentKinds, fishQuote, optionValueKinds, SAFE_WORD, type CompletionSpec } from './completion-spec.js';
import { VERSION } from './version.js';

export function fishScript(spec: CompletionSpec): string {
  return `# fish completion for oas ${VERSION}, written by \`oas completion fish\` (docs/completion.md).
# Install: oas completion fish > ~/.config/fish/completions/oas.fish

${fishTables(spec)}

# an option's value the --list helper needs: the configuration and catalog the command line names
function __oas_remember
    if contains -- $argv[1] -c --config
        set -g __oas_config (string replace -r '^~/' "$HOME/" -- $argv[2])
    else if test "$argv[1]" = --catalog
        set -g __oas_catalog $argv[2]
    end
end

# engines or sets, as \`oas completion --list $argv[1]\` gives them for that configuration (each
# word checked again); the built-in engines when it gives none
function __oas_list
    set -l args completion --list $argv[1]
    test -n "$__oas_config"; and set -a args --config $__oas_config
    test -n "$__oas_catalog"; and set -a args --catalog $__oas_catalog
    set -l found
    for line in ($__oas_cmd $args 2>/dev/null </dev/null)
        string match -q -r -- ${fishQuote(SAFE_WORD.source)} $line; and set -a found $line
    end
    if not set -q found[1]; and test "$argv[1]" = engines
        __oas_words engines
    else
        printf '%s\\n' $found
    end
end

function __oas_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -g __oas_cmd $tokens[1]
    set -g __oas_config ''
    set -g __oas_catalog ''
    set -e tokens[1]
    set -l cmdpath oas
    set -l pos 0
    set -l expect ''
    set -l ended 0
    for w in $tokens
        if test -n "$expect"
            __oas_remember $expect $w
            set expect ''
            continue
        end
        if test $ended = 0
            if test "$w" = --
                set ended 1
                continue
            else if string match -q -r -- '^--[^=]*=' $w
                set -l parts (string split -m 1 = -- $w)
                __oas_remember $parts[1] $parts[2]
                continue
            else if string match -q -r -- '^-.' $w
                set -l kind (__oas_option_value $cmdpath $w)
                test -n "$kind"; and set expect $w
                continue
            end
        end
        if test $ended = 0; and contains -- $w (__oas_subcommands $cmdpath)
            set cmdpath "$cmdpath $w"
            set pos 0
        else
            set pos (math $pos + 1)
        end
    end
    set -l kind
    set -l head ''
    if test -n "$expect"
        set kind (__oas_option_value $cmdpath $expect)
    else if test $ended = 0; and string match -q -r -- '^--[^=]*=' $cur
        set -l parts (string split -m 1 = -- $cur)
        set kind (__oas_option_value $cmdpath $parts[1])
        set head "$parts[1]="
        set cur "$parts[2]"
    else if test $ended = 0; and string match -q -r -- '^-' $cur
        __oas_options $cmdpath
        return
    else
        set -l subcommands (__oas_subcommands $cmdpath)
        if set -q subcommands[1]
            printf '%s\\n' $subcommands
            return
        end
        set kind (__oas_argument $cmdpath $pos)
    end
    switch "$kind"
        case files
            printf '%s\\n' $head(__fish_complete_path $cur)
        case dirs
            printf '%s\\n' $head(__fish_complete_directories $cur)
        case engines sets
            # a comma-separated list: the last name is completed, after the ones before it
            set head $head(string replace -r '[^,]*$' '' -- $cur)
            for word in (__oas_list $kind)
                printf '%s\\n' "$head$word"
            end
        case commands
            __oas_subcommands (string replace -r ' help$' '' -- $cmdpath)
        case text ''
        case '*'
            for word in (__oas_words $kind)
                printf '%s\\n' "$head$word"
            end
    end
end

complete -c oas -f -a '(__oas_complete)'
`;
}

/** The tables of src/cli/completion-tables.ts as fish functions that print one word a line. */
function fishTables(spec: CompletionSpec): string {
  const lists = (name: string, comment: string, entries: [string, readonly string[]][]) => [
    `# ${comment}`,
    `function ${name}`,
    '    switch $argv[1]',
    ...entries.filter(([, list]) => list.length > 0).flatMap(([key, list]) => [`        case ${fishQuote(key)}`, `            printf '%s\\n' ${list.map(fishQuote).join(' ')}`]),
    '    end',
    'end',
  ];
  const kinds = (name: string, comment: string, fallback: string, entries: [string, string][]) => [
    `# ${comment}`,
    `function ${name}`,
    '    switch "$argv[1]:$argv[2]"',
    ...entries.flatMap(([patterns, kind]) => [`        case ${patterns}`, `            echo ${fishQuote(kind)}`]),
    ...(fallback ? ['        case \'*\'', `            echo ${fallback}`] : []),
    '    end',
    'end',
  ];
  return [
    ...lists('__oas_subcommands', 'the subcommands of the command $argv[1] (oas, oas users...)', spec.commands.map((c) => [c.path, c.subcommands])),
    ...lists('__oas_options', 'the options of the command $argv[1]', spec.commands.map((c) => [c.path, c.options.flatMap((o) => o.names)])),
    ...lists('__oas_words', 'the words of the kind $argv[1]', Object.entries(spec.lists)),
    ...kinds('__oas_option_value', 'the kind of the value of the option $argv[2] of the command $argv[1]; nothing when it takes none', '', optionValueKinds(spec, fishQuote, ' ')),
    ...kinds('__oas_argument', 'the kind of the positional argument $argv[2] (from 0) of the command $argv[1]', 'text', argumentKinds(spec, fishQuote)),
  ].join('\n');
}
