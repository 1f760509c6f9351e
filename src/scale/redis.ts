/**
 * The connections to the team's Redis (`redis_url`) and what every part of oas needs to know of
 * them: a label that never shows the password, whether Redis answers now, and which errors mean
 * "Redis is unreachable" (503 from the API, a retry with back-off in a worker).
 *
 * Two ioredis connections per process: `commands` answers at once or fails at once (no offline
 * queue: an API request never hangs on a Redis that is down), `blocking` is BullMQ's (it retries
 * forever, as BullMQ requires for workers). The engine cache uses Keyv's Redis adapter, which
 * brings its own client (node-redis), configured the same way: fail fast, reconnect in the
 * background.
 */
import { Redis, type RedisOptions } from 'ioredis';

/** Longest wait between two attempts to reach Redis. */
const MAX_BACKOFF_MS = 5_000;
const CONNECT_TIMEOUT_MS = 3_000;

/** Milliseconds before attempt `n` (1-based) to reconnect: 200, 400, 800... up to 5 s. */
export function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(attempt, 16));
}

/** `redis://host:port/db` without user or password, for messages and logs. */
export function redisLabel(url: string): string {
  try {
    const parsed = new URL(url);
    const db = parsed.pathname && parsed.pathname !== '/' ? parsed.pathname : '';
    return `${parsed.protocol}//${parsed.host}${db}`;
  } catch {
    return 'redis';
  }
}

/** Redis could not be reached (or stopped answering): the API's 503. */
export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

/** The one line a caller sees when Redis is down (never the password, never a stack). */
export function unavailableMessage(label: string, cause?: unknown): string {
  const why = cause === undefined ? '' : ` (${reasonOf(cause)})`;
  return `Redis at ${label} is unreachable${why}: analyses are unavailable until it is back`;
}

/** Whether an error comes from a Redis connection that is down or gone (not a bad command). */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof RedisUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true;
  return error.name === 'MaxRetriesPerRequestError'
    || /Stream isn't writeable|Connection is closed|enableOfflineQueue|connect ETIMEDOUT|Command timed out|The client is closed|Socket closed unexpectedly|LOADING /i.test(error.message);
}

/** A short reason for a connection error: `connect ECONNREFUSED 127.0.0.1:6379`, never a stack. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? '').replace(/redis(s)?:\/\/[^@\s]*@/gi, 'redis$1://').slice(0, 200);
}

export interface RedisLink {
  url: string;
  /** `redis://host:port`, without credentials. */
  label: string;
  /** Commands that answer at once or fail at once (no offline queue). */
  commands: Redis;
  /** Whether `commands` is connected and ready now. */
  ready(): boolean;
  /** Why it is not (one line, no password), since it last was; '' when nothing was said. */
  lastError(): string;
  /** Resolves when ready, or rejects with RedisUnavailableError after `ms`. */
  whenReady(ms: number): Promise<void>;
  /** A new connection that retries forever (BullMQ workers). */
  blocking(): Redis;
  close(): Promise<void>;
}

const BASE_OPTIONS: RedisOptions = {
  connectTimeout: CONNECT_TIMEOUT_MS,
  retryStrategy: (attempt: number) => backoffMs(attempt),
  connectionName: 'oas',
};

/** Connects (in the background) to `url`. Nothing is awaited: callers check `ready`. */
export function openRedis(url: string): RedisLink {
  const label = redisLabel(url);
  let lastError = '';
  const commands = new Redis(url, { ...BASE_OPTIONS, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 10_000 });
  commands.on('error', (error: unknown) => {
    lastError = reasonOf(error);
  });
  commands.on('ready', () => {
    lastError = '';
  });
  const others = new Set<Redis>();
  return {
    url,
    label,
    commands,
    ready: () => commands.status === 'ready',
    lastError: () => lastError,
    whenReady: (ms) => new Promise<void>((resolve, reject) => {
      if (commands.status === 'ready') return resolve();
      const timer = setTimeout(() => {
        commands.off('ready', onReady);
        reject(new RedisUnavailableError(unavailableMessage(label, lastError || 'no answer')));
      }, ms);
      timer.unref();
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      commands.once('ready', onReady);
    }),
    blocking: () => {
      const connection = new Redis(url, { ...BASE_OPTIONS, maxRetriesPerRequest: null });
      connection.on('error', () => {}); // told through `commands` (the same Redis)
      others.add(connection);
      return connection;
    },
    close: async () => {
      // QUIT needs an answer; a connection that is not up is just dropped (no retry left running).
      await Promise.allSettled([commands, ...others].map((c) => (c.status === 'ready' ? c.quit().catch(() => c.disconnect()) : c.disconnect())));
    },
  };
}

/**
 * Tells `say` (one line each, no password) when Redis stops answering, each time the connection
 * tries again and after how long (`error`), and when it is back (`info`: a recovery is no error).
 */
export function reportOutages(link: RedisLink, say: (line: string, level: 'error' | 'info') => void): void {
  let down = false;
  link.commands.on('reconnecting', (ms: number) => {
    down = true;
    // A connection closed by Redis (killed, restarted) comes without an error.
    say(`Redis at ${link.label} is unreachable (${link.lastError() || 'connection closed'}); retrying in ${(ms / 1000).toFixed(1)} s`, 'error');
  });
  link.commands.on('ready', () => {
    if (down) say(`Redis at ${link.label} is back`, 'info');
    down = false;
  });
}
