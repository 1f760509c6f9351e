/**
 * `oas completion bash|zsh|fish`: a script that completes oas's commands, options, engine ids and
 * aliases, engine sets, formats and file names, made from the commander program itself. The
 * script asks `oas completion --list engines|sets` (hidden) at completion time for what depends
 * on the configuration. Start-up cost: the helper loads the catalog from the engines' cached
 * declarations and nothing of the script writers.
 */
import type { Command } from 'commander';
import { SHELLS, completionSpec, type Shell } from './completion-spec.js';
import { EXIT_OK, UsageError } from './errors.js';

export interface CompletionOptions {
  /** Hidden: `engines` or `sets`, one per line, for the configuration given. */
  list?: string;
  config?: string;
  catalog?: string;
}

const shellList = `${SHELLS.slice(0, -1).join(', ')} or ${SHELLS.at(-1)}`;

export async function completionCommand(program: Command, shell: string | undefined, options: CompletionOptions): Promise<number> {
  if (options.list !== undefined) {
    const { listValues } = await import('./completion-values.js');
    return listValues(options.list, options);
  }
  if (shell === undefined) throw new UsageError(`oas completion needs a shell: ${shellList} (e.g. oas completion bash)`);
  // main writes the message inert (src/text/inert.ts): the word is the user's.
  if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`unknown shell "${shell.slice(0, 40)}": oas completion writes a script for ${shellList}`);
  const { wordLists } = await import('./completion-words.js');
  const spec = completionSpec(program, await wordLists());
  const write = await scriptWriter(shell as Shell);
  process.stdout.on('error', () => {}); // `oas completion bash | head`
  process.stdout.write(write(spec));
  return EXIT_OK;
}

async function scriptWriter(shell: Shell) {
  if (shell === 'bash') return (await import('./completion-bash.js')).bashScript;
  if (shell === 'zsh') return (await import('./completion-zsh.js')).zshScript;
  return (await import('./completion-fish.js')).fishScript;
}
