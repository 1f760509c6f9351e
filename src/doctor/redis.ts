/** Redis of `redis_url` answers a PING, within the time given (its label never holds the password). */
import { openRedis, reasonOf } from '../scale/redis.js';
import type { DoctorCheck } from './report.js';

export async function checkRedis(url: string, timeoutMs: number): Promise<DoctorCheck> {
  const link = openRedis(url);
  const check = (ok: boolean, message: string): DoctorCheck => ({ kind: 'redis', target: link.label, ok, message });
  const refused = new Promise<never>((_, reject) => {
    link.commands.once('error', reject);
  });
  refused.catch(() => {}); // an error after the answer is no one's
  try {
    await Promise.race([link.whenReady(timeoutMs), refused]);
    const answer = await link.commands.ping();
    return check(true, `answered ${answer}`);
  } catch (error) {
    // The connection's own error, or the wait's: `Redis at <label> is unreachable (<why>): ...`.
    const why = reasonOf(error).replace(/^Redis at \S+ is unreachable \((.*)\): .*$/, '$1');
    return check(false, `unreachable (${why}): check redis_url (--redis, OAS_REDIS_URL)`);
  } finally {
    await link.close();
  }
}
