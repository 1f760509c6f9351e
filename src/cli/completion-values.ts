/**
 * `oas completion --list engines|sets` (hidden): what a completion script asks at completion time,
 * one word a line, for the configuration the command line names (--config, --catalog, else
 * OAS_CONFIG or ./oas.config.json as the command would read): the engine ids and aliases with
 * the custom engines and each set as `@name`, or the set names. A word that is not plainly safe
 * on a command line (SAFE_WORD) is never printed: the scripts check again.
 */
import { loadListingSettings } from '../app.js';
import type { Config } from '../config/schema.js';
import { SAFE_WORD } from './completion-spec.js';
import { EXIT_OK, UsageError } from './errors.js';

export async function listValues(what: string, options: { config?: string; catalog?: string }): Promise<number> {
  if (what !== 'engines' && what !== 'sets') throw new UsageError(`--list takes engines or sets, not "${what.slice(0, 40)}"`);
  const flags: Partial<Config> = options.catalog === undefined ? {} : { catalog: options.catalog as Config['catalog'] };
  const { catalog } = await loadListingSettings({ file: options.config, flags });
  const sets = [...catalog.sets.keys()];
  const words = what === 'sets' ? sets : [...catalog.names(), ...sets.map((name) => `@${name}`)];
  process.stdout.on('error', () => {});
  process.stdout.write(words.filter((word) => SAFE_WORD.test(word)).map((word) => `${word}\n`).join(''));
  return EXIT_OK;
}
