/**
 * This build's version (package.json), for what a data store records of the oas that upgraded it
 * (src/store/schema.ts, src/scale/redis-schema.ts). Read when asked: start-up reads it only in
 * src/cli/version.ts.
 */
import { readFileSync } from 'node:fs';

export function oasVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
