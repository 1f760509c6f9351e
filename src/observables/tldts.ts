/**
 * tldts (the public-suffix list), loaded on first use and through `require`. Start-up cost: its
 * 200 KB CommonJS build imported as ESM costs ~35 ms more CPU (Node scans it for its named
 * exports), and commands that parse no host name (`oas engines`, `--version`) need none of it.
 */
import { createRequire } from 'node:module';
import type * as Tldts from 'tldts';

let lib: typeof Tldts | undefined;
const load = (): typeof Tldts => (lib ??= createRequire(import.meta.url)('tldts') as typeof Tldts);

export const parse: typeof Tldts.parse = (url, options) => load().parse(url, options);
export const getDomain: typeof Tldts.getDomain = (url, options) => load().getDomain(url, options);
