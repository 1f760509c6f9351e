/**
 * Which modules an `oas` process loads: a node `--import` hook that records the URL of every ES
 * module resolved and, at exit, every CommonJS module in require.cache, into the file named by
 * OAS_TEST_MODULE_LOG. For the start-up tests (a command loads only what it uses).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { importRecorder, type ImportRecorder } from './import-recorder.js';

/** `read` gives the modules recorded, with forward slashes. */
export type ModuleRecorder = ImportRecorder;

export function moduleRecorder(dir: string): ModuleRecorder {
  const hooks = join(dir, 'module-log-hooks.mjs');
  const record = join(dir, 'module-log.mjs');
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (process.env.OAS_TEST_MODULE_LOG) appendFileSync(process.env.OAS_TEST_MODULE_LOG, result.url + '\\n');
  return result;
}
`);
  writeFileSync(record, `import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const require = createRequire(import.meta.url);
process.on('exit', () => appendFileSync(process.env.OAS_TEST_MODULE_LOG, Object.keys(require.cache).map((p) => p + '\\n').join('')));
`);
  const recorder = importRecorder(record, 'OAS_TEST_MODULE_LOG');
  return { ...recorder, read: (log) => recorder.read(log).map((m) => m.replaceAll('\\', '/')) };
}
