/**
 * The plain `/results/<id>` page: the analysis and its results in a table, every value escaped,
 * refreshing itself until the analysis is complete. No script, no external asset.
 */
import type { AnalysisRecord } from '../analysis/service.js';
import { resultRows } from '../analysis/rows.js';
import type { Catalog } from '../engine/catalog.js';
import { escapeHtml } from './html.js';

const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a; --line: #d0d7de; --err: #b42318; --ok: #1a7f37; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8b949e; --line: #30363d; --err: #ff7b72; --ok: #3fb950; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 2rem auto; max-width: 1200px; padding: 0 1rem; }
h1 { font-size: 1.3rem; } .muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { position: sticky; top: 0; background: var(--bg); } td.obs { font-family: ui-monospace, monospace; word-break: break-all; }
.error { color: var(--err); } .ok { color: var(--ok); } pre { white-space: pre-wrap; word-break: break-all; font-size: 12px; }
`;

function page(title: string, body: string, refresh = false): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${refresh ? '<meta http-equiv="refresh" content="2">' : ''}<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${body}</body></html>`;
}

export function renderResultsPage(record: AnalysisRecord, catalog: Catalog, apiPrefix: string): string {
  const { done, total } = record.progress;
  const status = record.complete
    ? `complete${record.duration_ms !== null ? ` in ${(record.duration_ms / 1000).toFixed(1)} s` : ''}`
    : `running: ${done} of ${total} engine lookups done`;
  const rows = resultRows(record.results, catalog)
    .map((r) => `<tr><td class="obs">${escapeHtml(r.observable)}</td><td>${escapeHtml(r.type)}</td><td>${escapeHtml(r.engine)}</td>`
      + `<td class="${r.status === 'error' ? 'error' : ''}">${escapeHtml(r.summary)}</td></tr>`)
    .join('\n');
  const pending = record.results.filter((r) => r === null).length;
  const body = `
<h1>Analysis <span class="obs">${escapeHtml(record.id)}</span></h1>
<p class="muted">Started ${escapeHtml(record.created_at)} · engines: ${escapeHtml(record.engines.join(', '))} · <strong class="${record.complete ? 'ok' : ''}">${escapeHtml(status)}</strong></p>
<table><thead><tr><th>Observable</th><th>Type</th><th>Engine</th><th>Summary</th></tr></thead>
<tbody>${rows || '<tr><td colspan="4" class="muted">No result yet.</td></tr>'}</tbody></table>
${pending > 0 ? `<p class="muted">${pending} observable(s) still running…</p>` : ''}
${record.complete ? `<details><summary>Raw JSON</summary><pre>${escapeHtml(JSON.stringify(record.results, null, 2))}</pre></details>
<p class="muted">API: <code>GET ${escapeHtml(apiPrefix)}results/${escapeHtml(record.id)}</code></p>` : ''}`;
  return page(`oas · analysis ${record.id}`, body, !record.complete);
}

export function renderNotFoundPage(id: string): string {
  return page('oas · analysis not found', `<h1>Analysis not found</h1><p class="muted">No analysis has the id <code>${escapeHtml(id.slice(0, 100))}</code>.</p>`);
}
