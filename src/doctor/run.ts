/**
 * `oas doctor` (issue 40): the configuration checked as `oas serve` would use it, every check at
 * once and each within its time (an engine's: its timeout_ms or engine_timeout_ms; the others:
 * LOCAL_TIMEOUT_MS). The CLI (src/cli/doctor.ts) and `POST {prefix}doctor` (src/server/doctor.ts)
 * both print this report.
 */
import type { Config } from '../config/schema.js';
import type { Catalog } from '../engine/catalog.js';
import type { EngineDefinition } from '../engine/contract.js';
import type { HttpTransport } from '../http/client.js';
import { checkDataFolder } from './data-dir.js';
import { checkEngine, usable, type EngineCheckOutcome } from './engines.js';
import { checkDnsServer, checkProxy } from './network.js';
import { reportLines, type DoctorCheck, type DoctorReport } from './report.js';

/** The time the data folder, Redis, the proxy and each DNS server get. */
export const LOCAL_TIMEOUT_MS = 5_000;

export interface DoctorOptions {
  config: Config;
  catalog: Catalog;
  /** The engines to check (ids or aliases; `@set` too); default: every usable one. */
  engines?: readonly string[] | undefined;
  /** The HTTP client to go through (a server's own); default: one made for this run, then closed. */
  transport?: HttpTransport;
}

/** The engines checked, in the catalog's order: those named (`Catalog.select`: an unknown name throws), else every usable one. */
export function enginesToCheck(options: Pick<DoctorOptions, 'config' | 'catalog' | 'engines'>): EngineDefinition[] {
  const { config, catalog } = options;
  if (options.engines && options.engines.length > 0) {
    const named = new Set(catalog.select(options.engines).map((s) => s.engine));
    return catalog.engines.filter((e) => named.has(e));
  }
  return catalog.engines.filter((e) => usable(e, { engineSettings: config.engines, timeoutMs: config.engine_timeout_ms }));
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { config } = options;
  const engines = enginesToCheck(options);
  const transport = options.transport ?? new (await import('../http/client.js')).HttpTransport({
    proxyUrl: config.proxy_url,
    sslVerify: config.ssl_verify,
    dnsServers: config.dns_servers,
  });
  try {
    const local: Promise<DoctorCheck>[] = [
      Promise.resolve().then(() => checkDataFolder(config.data_dir)),
      ...(config.redis_url ? [import('./redis.js').then((m) => m.checkRedis(config.redis_url, LOCAL_TIMEOUT_MS))] : []),
      ...(config.proxy_url ? [checkProxy(config.proxy_url, LOCAL_TIMEOUT_MS)] : []),
      ...config.dns_servers.map((server) => checkDnsServer(server, LOCAL_TIMEOUT_MS)),
    ];
    const services = {
      transport,
      dnsServers: config.dns_servers,
      dataDir: config.data_dir,
      engineSettings: config.engines,
      timeoutMs: config.engine_timeout_ms,
    };
    const [checks, outcomes] = await Promise.all([
      Promise.all(local),
      Promise.all(engines.map((engine): Promise<EngineCheckOutcome> => checkEngine(engine, services))),
    ]);
    const all = [...checks, ...outcomes.map((o) => o.check)];
    const report = {
      ok: all.every((c) => c.ok),
      calls: outcomes.reduce((sum, o) => sum + o.calls, 0),
      engines: engines.length,
      checks: all,
    };
    return { ...report, lines: reportLines(report) };
  } finally {
    if (!options.transport) await transport.close();
  }
}
