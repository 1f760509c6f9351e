/** oas's version, from package.json (`oas --version`, and how the MCP server describes itself). */
import { readFileSync } from 'node:fs';

export const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
