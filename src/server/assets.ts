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

/**
 * Browser libraries from the dependencies (node_modules), served under /assets/<name> like the
 * rest: cytoscape draws the results page's graph view (its self-contained ES module build: no
 * eval, no other file; the page imports it only when the graph view opens).
 */
export const LIBRARIES: Record<string, string> = {
  'cytoscape.js': 'cytoscape/dist/cytoscape.esm.min.mjs',
};

export function loadAssets(dirs: readonly string[] = DIRS, libraries: Record<string, string> = LIBRARIES): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const add = (name: string, file: string) => {
    const body = readFileSync(file);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(name, { body, type: TYPES[extname(name)]!, etag });
  };
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (!TYPES[extname(name)]) continue;
      add(name, join(dir, name));
    }
  }
  for (const [name, specifier] of Object.entries(libraries)) {
    let file: string;
    try {
      file = fileURLToPath(import.meta.resolve(specifier));
    } catch {
      continue; // not installed: the page says the graph cannot be drawn and keeps its text form
    }
    if (TYPES[extname(name)] && existsSync(file)) add(name, file);
  }
  return assets;
}
