/**
 * What `oas completion` completes, read from the commander program itself: every command and
 * subcommand, each one's options (its own, the global ones, --help) and arguments, and what kind of
 * value each takes. A new command, option or argument is completed without editing this file; a
 * new option whose value is a known kind (a file, a list of engines...) is named in OPTION_VALUES.
 */
import type { Command, Option } from 'commander';

/** The shells `oas completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/**
 * What a value is: `text` (nothing proposed), `files`, `dirs`, `engines` and `sets` (comma-separated
 * lists, asked of `oas completion --list` at completion time), `commands` (the subcommands of the
 * command `help` belongs to), or the name of a fixed list of words (CompletionSpec.lists).
 */
export type ValueKind = string;

export interface CommandSpec {
  /** `oas`, `oas analyze`, `oas users add`. */
  path: string;
  subcommands: string[];
  options: OptionSpec[];
  /** The kind of each positional argument; the last repeats when `variadic`. */
  args: ValueKind[];
  variadic: boolean;
}

export interface OptionSpec {
  /** `-e`, `--engines`. */
  names: string[];
  /** The kind of its value; undefined for a flag that takes none. */
  value: ValueKind | undefined;
}

export interface CompletionSpec {
  commands: CommandSpec[];
  /** The fixed lists of words, by kind; `engines` is the built-in catalog (the fallback of --list engines). */
  lists: Record<string, readonly string[]>;
}

/** The kind of an option's value, by its long name; otherwise by its placeholder (`<file>`, `<dir>`), else text. */
const OPTION_VALUES: Record<string, ValueKind> = {
  '--engines': 'engines',
  '--set': 'sets',
  '--format': 'formats',
  '--catalog': 'catalogs',
  '--tlp': 'tlp',
  '--pap': 'pap',
  '--log-format': 'log-formats',
  '--min-verdict': 'verdicts',
  '--role': 'roles',
  '--file': 'files',
  '--config': 'files',
  '--output': 'files',
  '--data-dir': 'dirs',
};

/** The kind of a positional argument, by its name (`oas enrich <file>`, `oas push <target>`), else text. */
const ARGUMENT_VALUES: Record<string, ValueKind> = {
  file: 'files',
  input: 'files',
  target: 'push-targets',
  verdict: 'mark-verdicts',
  shell: 'shells',
  command: 'commands',
};

const PLACEHOLDER_VALUES: Record<string, ValueKind> = { file: 'files', dir: 'dirs' };

/** The commands of `program` and what they take; `lists` are the fixed words of each kind. */
export function completionSpec(program: Command, lists: Record<string, readonly string[]>): CompletionSpec {
  const commands: CommandSpec[] = [];
  const walk = (command: Command, path: string) => {
    // The help as `oas --help` shows it: the global options (--no-color...) in every command's.
    const help = command.createHelp();
    const subcommands = help.visibleCommands(command);
    const options = [...help.visibleOptions(command), ...(command.parent ? help.visibleGlobalOptions(command) : [])];
    const args = command.registeredArguments;
    commands.push({
      path,
      subcommands: subcommands.map((c) => c.name()),
      options: options.map(optionSpec),
      args: args.map((a) => ARGUMENT_VALUES[a.name()] ?? 'text'),
      variadic: args.at(-1)?.variadic === true,
    });
    // The implicit `help [command]` is listed but is no child of `command`: its own spec follows.
    for (const sub of subcommands) walk(sub, `${path} ${sub.name()}`);
  };
  walk(program, program.name());
  const unknown = [...new Set(commands.flatMap((c) => [...c.args, ...c.options.map((o) => o.value)]))]
    .filter((kind): kind is string => kind !== undefined && !BUILT_IN_KINDS.includes(kind) && !(kind in lists));
  if (unknown.length > 0) throw new Error(`completion: no list of words for ${unknown.join(', ')}`);
  return { commands, lists };
}

/** The kinds every script completes itself. */
export const BUILT_IN_KINDS = ['text', 'files', 'dirs', 'engines', 'sets', 'commands'];

function optionSpec(option: Option): OptionSpec {
  const names = [option.short, option.long].filter((n): n is string => typeof n === 'string');
  if (!option.required && !option.optional) return { names, value: undefined };
  const placeholder = /<([^>]+)>|\[([^\]]+)\]/.exec(option.flags);
  const value = (option.long && OPTION_VALUES[option.long]) ?? PLACEHOLDER_VALUES[placeholder?.[1] ?? placeholder?.[2] ?? ''] ?? 'text';
  return { names, value };
}

/** Only words that are safe as they are on a command line: a value from a configuration that is not one is never proposed. */
export const SAFE_WORD = /^@?[A-Za-z0-9][A-Za-z0-9_.+-]*$/;

/** `'...'` for bash and zsh: nothing inside is expanded. */
export const shQuote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** `'...'` for fish: only \\ and \' are special inside. */
export const fishQuote = (word: string): string => `'${word.replace(/[\\']/g, (c) => `\\${c}`)}'`;

/**
 * Each option that takes a value, with its kind: the pattern of its `<command path>:<name>` keys,
 * each quoted by `quote` and joined by `separator` (a shell's case alternatives).
 */
export function optionValueKinds(spec: CompletionSpec, quote: (word: string) => string, separator: string): [string, string][] {
  return spec.commands.flatMap((c) => c.options
    .filter((o) => o.value !== undefined)
    .map((o): [string, string] => [o.names.map((n) => quote(`${c.path}:${n}`)).join(separator), o.value!]));
}

/**
 * Each positional argument of a command that takes some completion, with its kind: the pattern
 * `<command path>:<n>`, or for the last of a variadic command `<command path>:*` (any n from there).
 */
export function argumentKinds(spec: CompletionSpec, quote: (word: string) => string): [string, string][] {
  return spec.commands
    .filter((c) => c.args.some((kind) => kind !== 'text'))
    .flatMap((c) => c.args.map((kind, i): [string, string] => [c.variadic && i === c.args.length - 1 ? `${quote(`${c.path}:`)}*` : quote(`${c.path}:${i}`), kind]));
}
