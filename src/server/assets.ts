/**
 * The pages' static files, all served by oas itself (nothing from a CDN: the pages work
 * air-gapped): the compiled browser modules (dist/web) and the hand-written files (web/static).
 * Read once at start-up into memory; a request can only name a file of that list.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** dist/src/server → dist/web (compiled browser code) and web/static (repository). */
const DIRS = [
  fileURLToPath(new URL('../../web/', import.meta.url)),
  fileURLToPath(new URL('../../../web/static/', import.meta.url)),
];

export function loadAssets(dirs: readonly string[] = DIRS): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const type = TYPES[extname(name)];
      if (!type) continue;
      const body = readFileSync(join(dir, name));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      assets.set(name, { body, type, etag });
    }
  }
  return assets;
}
