/**
 * The harmless value of each observable type that `oas doctor` looks up in an engine that declares
 * no check of its own (src/engine/contract.ts `check`): well-known public names and addresses,
 * the hashes of the empty file, a documentation address. Its answer is kept nowhere.
 */
import type { EngineDefinition } from '../engine/contract.js';
import type { Observable, ObservableType } from '../observables/types.js';

export const HARMLESS: Readonly<Record<ObservableType, string>> = {
  IPv4: '8.8.8.8',
  IPv6: '2001:4860:4860::8888',
  FQDN: 'example.com',
  URL: 'https://example.com/',
  MD5: 'd41d8cd98f00b204e9800998ecf8427e',
  SHA1: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  SHA256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  Email: 'postmaster@example.com',
  // uBlock Origin.
  CHROME_EXTENSION: 'cjpalhdlnbpafiamejdnhcphjbkeiagm',
};

/** The observable an engine's check looks up: its declared one, else the harmless value of its first type. */
export function harmlessObservable(engine: EngineDefinition): Observable | undefined {
  const check = engine.check;
  if (typeof check === 'object' && 'observable' in check) return check.observable;
  const type = engine.types[0];
  return type === undefined ? undefined : { type, value: HARMLESS[type] };
}
