/**
 * `oas doctor` (issue 40): reads the configuration as `oas serve` does (--config, $OAS_CONFIG or
 * ./oas.config.json, the environment, --data-dir, --redis, --catalog), checks it (src/doctor/run.ts)
 * and prints one line per check, or `--json` the report `POST {prefix}doctor` answers. Exit 0 when
 * every check passed, 1 otherwise, 2 for a bad configuration or an unknown engine.
 */
import { loadSettings } from '../app.js';
import type { Config } from '../config/schema.js';
import { UnknownEngineError, UnknownEngineSetError } from '../engine/catalog.js';
import { runDoctor } from '../doctor/run.js';
import { inert, jsonInert } from '../text/inert.js';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.js';

export interface DoctorCommandOptions {
  config?: string;
  dataDir?: string;
  redis?: string;
  catalog?: string;
  /** `--engines a,b`: only these engines (ids, aliases or @sets). */
  engines?: string;
  json?: boolean;
}

export async function doctorCommand(options: DoctorCommandOptions): Promise<number> {
  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.redis !== undefined) flags.redis_url = options.redis;
  if (options.catalog !== undefined) flags.catalog = options.catalog as Config['catalog'];
  const { config, catalog } = await loadSettings({ file: options.config, flags });
  const engines = options.engines?.split(',').map((name) => name.trim()).filter(Boolean);
  if (options.engines !== undefined && engines!.length === 0) throw new UsageError('--engines needs a comma-separated list of engine ids or aliases');
  let report;
  try {
    report = await runDoctor({ config, catalog, engines });
  } catch (error) {
    if (error instanceof UnknownEngineError || error instanceof UnknownEngineSetError) throw new UsageError(`--engines: ${error.message}`);
    throw error;
  }
  if (options.json) {
    process.stdout.write(`${jsonInert(JSON.stringify(report, null, 2))}\n`);
  } else {
    process.stdout.write(report.lines.map((line) => `${inert(line)}\n`).join(''));
  }
  return report.ok ? EXIT_OK : EXIT_FAILED;
}
