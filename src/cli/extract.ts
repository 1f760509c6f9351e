/**
 * `oas extract FILE|TEXT` (issue 35): the observables a file (or a text) holds, with their type and
 * where each was found, asking no engine: what an analysis of it would look up. A table, or with
 * `--json` the answer of `POST /api/extract`.
 */
import { existsSync, statSync } from 'node:fs';
import { loadConfig } from '../config/load.js';
import { markingSettings } from '../marking/policy.js';
import { previewOf, type ExtractionPreview } from '../files/preview.js';
import { uploadLimits } from '../files/upload.js';
import { inertLine } from '../text/inert.js';
import { EXIT_OK, UsageError } from './errors.js';
import { fileBytes, readOne, STDIN_NAME } from './files-in.js';
import { quietOnClosedOutput } from './output.js';

export interface ExtractOptions {
  column?: string[];
  json?: boolean;
  config?: string;
}

export async function extractCommand(input: string[], options: ExtractOptions): Promise<number> {
  const stdout = quietOnClosedOutput();
  const { config } = loadConfig({ file: options.config });
  const limits = uploadLimits(config);
  const columns = options.column?.length ? options.column : undefined;
  let bytes: Uint8Array;
  let name: string;
  const first = input[0];
  if (input.length === 0 || (input.length === 1 && first === '-')) {
    if (process.stdin.isTTY) throw new UsageError('nothing to extract from: give a file or a text, or pipe one on standard input');
    bytes = await fileBytes('-', limits);
    name = STDIN_NAME;
  } else if (first !== undefined && isFile(first)) {
    if (input.length > 1) throw new UsageError(`one file at a time: ${first} is a file, and more was given after it`);
    bytes = await fileBytes(first, limits);
    name = first;
  } else {
    if (columns) throw new UsageError('--column chooses the columns of a CSV file: give the file');
    bytes = Buffer.from(input.join(' '), 'utf8');
    name = 'text';
  }
  const extraction = await readOne(bytes, name, limits, { columns });
  const preview = previewOf(extraction, markingSettings(config).internalScope);
  await stdout.write(options.json ? `${JSON.stringify(preview, null, 2)}\n` : await previewTable(preview, process.stdout.isTTY ? process.stdout.columns : undefined));
  return EXIT_OK;
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}

/** One row per observable (type, value, where found), the e-mail's authentication and notes after. */
async function previewTable(preview: ExtractionPreview, columns: number | undefined): Promise<string> {
  const { outputWidth } = await import('./table.js');
  const { default: Table } = await import('cli-table3');
  const width = outputWidth(columns);
  const typeWidth = 10;
  const valueWidth = Math.max(20, Math.floor((width - typeWidth - 10) * 0.45));
  const placeWidth = Math.max(20, width - typeWidth - valueWidth - 10);
  const table = new Table({ head: ['type', 'observable', 'found in'], colWidths: [typeWidth, valueWidth, placeWidth], wordWrap: true, wrapOnWordBoundary: false, style: { head: [], border: [] } });
  for (const o of preview.observables) {
    const places = o.found_in.map(inertLine).join('\n') + (o.internal ? `\n(internal: ${inertLine(o.internal)})` : '');
    table.push([o.type, inertLine(o.value), places || '-']);
  }
  const lines = [`${inertLine(preview.file.name)}: ${preview.file.kind}, ${preview.file.bytes} bytes, ${preview.observables.length} observable(s)`];
  if (preview.observables.length > 0) lines.push(table.toString());
  const auth = preview.email_auth;
  if (auth) lines.push(`authentication: SPF ${inertLine(auth.spf ?? 'none')}, DKIM ${inertLine(auth.dkim ?? 'none')}, DMARC ${inertLine(auth.dmarc ?? 'none')}${auth.authserv_id ? ` (by ${inertLine(auth.authserv_id)})` : ''}`);
  for (const note of preview.notes) lines.push(`note: ${inertLine(note)}`);
  return `${lines.join('\n')}\n`;
}
