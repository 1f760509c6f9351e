/**
 * The exports of an analysis, one module for the API (`/export/<id>?format=`), the CLI
 * (`oas analyze --format`) and the web UI's download buttons: csv, json, xlsx, stix (a STIX 2.1
 * bundle) and misp (a MISP event). Every one carries each observable's verdict. The text formats
 * are written a piece at a time from the stored results (the document is never built whole);
 * xlsx is written by exceljs's streaming writer.
 */
import { PassThrough } from 'node:stream';
import type { Catalog } from '../engine/catalog.js';
import type { ExportSource } from './common.js';

export type { ExportSource } from './common.js';

export const EXPORT_FORMATS = ['csv', 'json', 'xlsx', 'stix', 'misp'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}

/** How each format is served and named. */
export const EXPORT_FILES: Record<ExportFormat, { contentType: string; extension: string; binary: boolean }> = {
  csv: { contentType: 'text/csv; charset=utf-8', extension: 'csv', binary: false },
  json: { contentType: 'application/json; charset=utf-8', extension: 'json', binary: false },
  xlsx: { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', extension: 'xlsx', binary: true },
  stix: { contentType: 'application/stix+json;version=2.1; charset=utf-8', extension: 'stix.json', binary: false },
  misp: { contentType: 'application/json; charset=utf-8', extension: 'misp.json', binary: false },
};

/** The export's file name: `oas-<analysis id>.<extension>`. */
export function exportFileName(id: string, format: ExportFormat): string {
  return `oas-${id}.${EXPORT_FILES[format].extension}`;
}

/**
 * The export, in chunks (text, or bytes for xlsx). Each format's module is loaded when it is
 * asked for: `oas analyze --json` loads neither the STIX nor the MISP writer (start-up cost).
 */
export async function* exportChunks(format: ExportFormat, source: ExportSource, catalog: Catalog): AsyncGenerator<string | Uint8Array> {
  switch (format) {
    case 'csv':
      yield* (await import('./csv.js')).csvChunks(source.pages(), catalog, source.marking);
      return;
    case 'json':
      yield* (await import('./json.js')).jsonChunks(source.pages(), catalog, source.marking);
      return;
    case 'stix':
      yield* (await import('./stix.js')).stixChunks(source, catalog);
      return;
    case 'misp':
      yield* (await import('./misp.js')).mispChunks(source, catalog);
      return;
    case 'xlsx':
      yield* xlsxChunks(source, catalog);
  }
}

/** The workbook's bytes as exceljs writes them (exceljs is loaded only for this format). */
async function* xlsxChunks(source: ExportSource, catalog: Catalog): AsyncGenerator<Uint8Array> {
  const { writeXlsx } = await import('./xlsx.js');
  const pass = new PassThrough();
  let failure: unknown;
  const written = writeXlsx(source, catalog, pass).catch((error: unknown) => {
    failure = error;
    pass.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  try {
    for await (const chunk of pass) yield chunk as Uint8Array;
    await written;
    if (failure !== undefined) throw failure;
  } finally {
    // A reader that stops early: the writer stops too.
    if (!pass.destroyed) pass.destroy();
  }
}
