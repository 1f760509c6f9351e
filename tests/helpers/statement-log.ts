/**
 * Which SQL statements an `oas` process runs: a node `--import` module that wraps the SQLite
 * binding's statement methods (the sqlite3 package @keyv/sqlite uses) and appends each statement,
 * white space collapsed, to the file named by OAS_TEST_STATEMENT_LOG. For the statement budgets
 * (tests/statement-budget.test.ts). It loads sqlite3 in every process it records: not for the
 * module budgets.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importRecorder, type ImportRecorder } from './import-recorder.js';

/** The methods of sqlite3's Database that run SQL text. */
const METHODS = ['all', 'run', 'get', 'each', 'exec', 'prepare'];

export function statementRecorder(dir: string): ImportRecorder {
  const record = join(dir, 'statement-log.mjs');
  const root = fileURLToPath(new URL('../../../package.json', import.meta.url));
  writeFileSync(record, `import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const { Database } = createRequire(${JSON.stringify(root)})('sqlite3');
for (const method of ${JSON.stringify(METHODS)}) {
  const original = Database.prototype[method];
  Database.prototype[method] = function (sql, ...rest) {
    appendFileSync(process.env.OAS_TEST_STATEMENT_LOG, String(sql).replace(/\\s+/g, ' ').trim() + '\\n');
    return original.call(this, sql, ...rest);
  };
}
`);
  return importRecorder(record, 'OAS_TEST_STATEMENT_LOG');
}
