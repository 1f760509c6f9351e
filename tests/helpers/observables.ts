/** Observables that no fake knows about, one per type: what the "not found" tests look up. */
import type { ObservableType } from '../../src/observables/types.js';

export const UNKNOWN: Readonly<Record<ObservableType, string>> = {
  IPv4: '198.51.100.77',
  IPv6: '2a00:1450:4001:80b::200e',
  FQDN: 'benign.example.org',
  URL: 'https://benign.example.org/index.html',
  MD5: 'd41d8cd98f00b204e9800998ecf8427e',
  SHA1: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  SHA256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  Email: 'nobody@example.org',
  CHROME_EXTENSION: 'aapbdbdomjkkjkaonfhkkikfgjllcleb',
};
