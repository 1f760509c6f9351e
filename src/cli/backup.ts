/**
 * `oas backup PATH [--force]` and `oas restore PATH`: the SQLite file of data_dir copied while a
 * server runs, and put back while none does (src/store/backup.ts). With redis_url the analyses
 * live in Redis: both refuse and point at Redis's own tools.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { EXIT_OK, UsageError } from './errors.js';

export interface BackupOptions {
  config?: string;
  dataDir?: string;
  force?: boolean;
}

export async function backupCommand(path: string, options: BackupOptions): Promise<number> {
  const config = await sqliteConfig(options, 'backup');
  const target = resolve(path);
  if (existsSync(target) && !options.force) throw new UsageError(`backup: ${target} exists: give --force to replace it`);
  if (!isFolder(dirname(target))) throw new UsageError(`backup: ${dirname(target)}: no such folder`);
  const { backupStore } = await import('../store/backup.js');
  const written = await backupStore(config.data_dir, target);
  const { inertLine } = await import('../text/inert.js');
  process.stdout.write(`wrote ${inertLine(written.path)}: ${written.analyses === 1 ? '1 analysis' : `${written.analyses} analyses`}, schema ${written.schema}, ${kib(written.bytes)} (a copy of ${inertLine(config.data_dir)})\n`);
  return EXIT_OK;
}

export async function restoreCommand(path: string, options: BackupOptions): Promise<number> {
  const config = await sqliteConfig(options, 'restore');
  const source = resolve(path);
  if (!existsSync(source)) throw new UsageError(`restore: ${source}: no such file`);
  const { servingPids } = await import('../fs/serving.js');
  const pids = servingPids(config.data_dir);
  if (pids.length > 0) {
    throw new UsageError(`restore: oas serve (pid ${pids.join(', ')}) uses the data folder ${config.data_dir}: stop it, then restore`);
  }
  const [{ restoreStore }, { SCHEMA }, { inertLine }] = await Promise.all([import('../store/backup.js'), import('../store/storage.js'), import('../text/inert.js')]);
  const restored = await restoreStore(config.data_dir, source);
  const upgraded = restored.schema < SCHEMA ? `, upgraded to schema ${SCHEMA}` : '';
  const kept = restored.previous ? `; the file it replaced is kept as ${inertLine(restored.previous)}` : '';
  process.stdout.write(`restored ${inertLine(source)} (schema ${restored.schema}${upgraded}) into ${inertLine(config.data_dir)}${kept}\n`);
  return EXIT_OK;
}

/** The configuration, refused when the analyses live in Redis (not in the SQLite file). */
async function sqliteConfig(options: BackupOptions, what: 'backup' | 'restore'): Promise<Config> {
  const { loadConfig } = await import('../config/load.js');
  const flags: Partial<Config> = options.dataDir === undefined ? {} : { data_dir: options.dataDir };
  const { config } = loadConfig({ file: options.config, flags });
  if (config.redis_url) {
    throw new UsageError(`${what}: with redis_url the analyses, users and history live in Redis, not in ${config.data_dir}: use Redis's own tools (BGSAVE, then copy its dump.rdb; see docs/upgrades.md)`);
  }
  return config;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function kib(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
