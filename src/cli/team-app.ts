/**
 * The app over the team's analyses, for a command that reads them where the servers keep them
 * (`oas push`, `oas history`): the SQLite file of data_dir, or Redis with redis_url (opened as a
 * worker opens it: the analyses live there). Its flags `--config`, `--data-dir`, `--redis`.
 */
import type { App } from '../app.js';
import type { Config } from '../config/schema.js';

export interface TeamAppOptions {
  config?: string;
  dataDir?: string;
  redis?: string;
}

/** Runs `use` with the app, Redis answering (5 s at most), and closes the app after it. */
export async function withTeamApp<T>(options: TeamAppOptions, use: (app: App) => Promise<T>): Promise<T> {
  const flags: Partial<Config> = {};
  if (options.dataDir !== undefined) flags.data_dir = options.dataDir;
  if (options.redis !== undefined) flags.redis_url = options.redis;
  const settings = { file: options.config, flags };
  const { loadConfig } = await import('../config/load.js');
  const { config } = loadConfig(settings);
  const { createApp } = await import('../app.js');
  const app = await createApp(settings, { role: config.redis_url ? 'worker' : 'cli' });
  try {
    await app.scale?.link.whenReady(5_000);
    return await use(app);
  } finally {
    await app.close();
  }
}
