/**
 * The SQLite file's schema version: `PRAGMA user_version` (0 in a file of oas 0.1.0, which
 * recorded none), and the table `oas_schema` (key, value): `schema`, `oas` (the version of oas
 * that upgraded it last), `upgraded_at`, `upgraded_from`. storage.ts reads the version once as
 * it opens the file and loads this module only when it differs from its own (SCHEMA): a file of
 * an older schema is upgraded by the numbered migrations (src/store/migrations.ts), all in one
 * transaction with the version they reach; a file of a newer one is refused, unchanged.
 */
import KeyvSqlite from '@keyv/sqlite';
import { ConfigError } from '../config/load.js';
import { oasVersion } from '../config/version.js';
import { MIGRATIONS, type KeyvText } from './migrations.js';

/** Never dropped nor reshaped by any version: an older oas reads it to say who wrote a file. */
export const SCHEMA_TABLE = 'oas_schema';

/**
 * The one line that refuses the file `path` of a newer schema (`found`), naming the oas that wrote
 * it when known; `what` is how the line names it (`the data folder /x`, `the backup /y`).
 */
export async function newerSchemaError(path: string, what: string, found: number, schema: number): Promise<ConfigError> {
  const writer = await writtenBy(path);
  return new ConfigError(`${what} was written by schema ${found}${writer ? ` (oas ${writer})` : ''}; this oas ${oasVersion()} reads schema ${schema} and older: upgrade oas`);
}

/** `oas_schema`'s `oas`, read without writing (the table exists: Keyv's CREATE TABLE IF NOT EXISTS is no write). */
async function writtenBy(path: string): Promise<string | undefined> {
  const table = new KeyvSqlite({ uri: `sqlite://${path}`, table: SCHEMA_TABLE, busyTimeout: 10_000 });
  try {
    const rows = (await table.query(`SELECT value FROM ${SCHEMA_TABLE} WHERE key = 'oas'`)) as { value: string }[];
    const version = rows[0]?.value;
    return typeof version === 'string' && /^[\w.+-]{1,40}$/.test(version) ? version : undefined;
  } catch {
    return undefined;
  } finally {
    await table.close().catch(() => {});
  }
}

/**
 * Brings the file of `table`'s connection to `schema`: the migrations it lacks, in order, then the
 * version, in one transaction (BEGIN IMMEDIATE: another process opening the file at once waits,
 * then finds it done). Refuses a file of a newer schema, unchanged.
 */
export async function upgradeSchema(table: KeyvSqlite, options: { path: string; dataDir: string; schema: number; text: KeyvText }): Promise<void> {
  const { path, dataDir, schema, text } = options;
  if (MIGRATIONS.at(-1)?.to !== schema) throw new Error(`the migrations reach schema ${MIGRATIONS.at(-1)?.to}, not ${schema}`);
  await table.query('BEGIN IMMEDIATE');
  let newer: number | undefined;
  try {
    const found = ((await table.query('PRAGMA user_version')) as { user_version: number }[])[0]?.user_version ?? 0;
    if (found > schema) newer = found;
    else if (found < schema) {
      for (const migration of MIGRATIONS) if (migration.to > found) await migration.run(table, text);
      await table.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (key VARCHAR(255) PRIMARY KEY, value TEXT)`);
      const record: [string, string][] = [['schema', String(schema)], ['oas', oasVersion()], ['upgraded_at', new Date().toISOString()], ['upgraded_from', String(found)]];
      await table.query(`INSERT OR REPLACE INTO ${SCHEMA_TABLE} (key, value) VALUES ${record.map(() => '(?, ?)').join(', ')}`, record.flat());
      await table.query(`PRAGMA user_version = ${Math.floor(schema)}`);
    }
    await table.query(newer === undefined ? 'COMMIT' : 'ROLLBACK');
  } catch (error) {
    await table.query('ROLLBACK').catch(() => {});
    throw error;
  }
  if (newer !== undefined) throw await newerSchemaError(path, `the data folder ${dataDir}`, newer, schema);
}
