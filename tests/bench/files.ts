/**
 * The bench's "Files in" section (issue 35): reading a 10 MB e-mail and a 200-page PDF.
 *
 * - `oas extract FILE --json` as a whole process, spawn to exit: time and peak RSS.
 * - The same files posted to `oas serve`'s `POST {prefix}extract`, both at once, while a
 *   client polls the server: the longest the server left a poll waiting (its event loop's longest
 *   stall as a client sees it), next to the same client's figures on the idle server.
 *
 * The e-mail is built here: an HTML body of 20 000 links (mismatched texts) in base64, a 3 MB
 * text body of indicators, and a 3 MB binary attachment (hashed, not opened); the PDF is the
 * corpus's 200-page report (tests/helpers/corpus-docs.ts).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pdfOfPages } from '../helpers/corpus-docs.js';
import { OAS_BIN, runNode, startServer } from './proc.js';

const POLL_CLIENT = fileURLToPath(new URL('./poll-client.js', import.meta.url));
const execFileAsync = promisify(execFile);

/** An e-mail of about `megabytes` MB. */
export function bigEmail(megabytes = 10): Buffer {
  const links: string[] = [];
  for (let i = 0, size = 0; size < megabytes * 0.35 * 1024 * 1024; i++) {
    const link = `<p><a href="https://login-${i}.phish${i % 97}.example/verify?id=${i}">https://bank${i % 13}.example/account</a> from 45.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}</p>\n`;
    links.push(link);
    size += link.length;
  }
  const html = Buffer.from(`<html><body>${links.join('')}</body></html>`).toString('base64').replace(/.{76}/g, '$&\r\n');
  const lines: string[] = [];
  for (let i = 0, size = 0; size < megabytes * 0.25 * 1024 * 1024; i++) {
    const line = `host${i}.bad${i % 101}.example seen at 91.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255} hash ${randomBytes(32).toString('hex')}\r\n`;
    lines.push(line);
    size += line.length;
  }
  const attachment = randomBytes(Math.floor(megabytes * 0.22 * 1024 * 1024)).toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from([
    'Received: from mx1.sender.example (mx1.sender.example [203.0.113.25]) by mx.victim.example; Tue, 3 Nov 2026 10:00:00 +0000',
    'Received: from [10.1.2.3] (unknown [198.51.100.77]) by mx1.sender.example; Tue, 3 Nov 2026 09:59:58 +0000',
    'Authentication-Results: mx.victim.example; spf=softfail smtp.mailfrom=sender.example; dkim=fail; dmarc=fail',
    'From: "Bank" <alerts@sender.example>',
    'Reply-To: collect@drop.example',
    'To: analyst@victim.example',
    'Subject: Verify your accounts',
    'Message-ID: <big@sender.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    '--outer',
    'Content-Type: multipart/alternative; boundary="inner"',
    '',
    '--inner',
    'Content-Type: text/plain; charset=utf-8',
    '',
    lines.join(''),
    '--inner',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    html,
    '--inner--',
    '--outer',
    'Content-Type: application/octet-stream; name="payload.bin"',
    'Content-Disposition: attachment; filename="payload.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    attachment,
    '--outer--',
    '',
  ].join('\r\n'));
}

interface Out {
  row(name: string, value: string): void;
  title(text: string): void;
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

async function polls(url: string, count: number): Promise<number[]> {
  const { stdout } = await execFileAsync(process.execPath, [POLL_CLIENT, url, String(count)], { maxBuffer: 16 * 1024 * 1024 });
  return (JSON.parse(stdout) as { times: number[] }).times;
}

export async function benchFiles(dir: string, configFile: string, prefix: string, out: Out): Promise<{ emailMs: number; pdfMs: number; stallMs: number }> {
  out.title('Files in: oas extract FILE --json (whole process, spawn to exit), then oas serve reading them while polled');
  const files = [
    { label: '10 MB e-mail', name: 'big.eml', bytes: bigEmail(10), key: 'emailMs' as const },
    { label: '200-page PDF', name: 'report-200.pdf', bytes: Buffer.from(await pdfOfPages(200)), key: 'pdfMs' as const },
  ];
  const figures = { emailMs: 0, pdfMs: 0, stallMs: 0 };
  for (const { label, name, bytes, key } of files) {
    const file = join(dir, name);
    writeFileSync(file, bytes);
    const run = await runNode([OAS_BIN, 'extract', file, '--json', '--config', configFile], { statsFile: join(dir, `extract-${key}.stats`), cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    figures[key] = run.ms;
    const rss = run.stats?.maxRssKiB;
    out.row(`${label} (${(bytes.byteLength / 1024 / 1024).toFixed(1)} MB)`, `${run.ms.toFixed(0)} ms, peak RSS ${rss === undefined ? 'n/a' : `${(rss / 1024).toFixed(0)} MiB`}${run.code === 0 ? '' : `; exit ${run.code}: ${run.stderr.trim().slice(0, 200)}`}`);
  }

  const server = await startServer(configFile, join(dir, 'files-server.stats'), prefix);
  try {
    const poll = `${server.url}${prefix}is_analysis_complete/00000000-0000-4000-8000-000000000000`;
    const idle = await polls(poll, 300);
    const bodies = files.map(({ name, bytes }) => ({ name, bytes }));
    const upload = (body: { name: string; bytes: Buffer }) => {
      const form = new FormData();
      form.append('file', new Blob([body.bytes]), body.name);
      const started = performance.now();
      return fetch(`${server.url}${prefix}extract`, { method: 'POST', body: form }).then(async (res) => ({ status: res.status, ms: performance.now() - started, text: res.ok ? '' : await res.text() }));
    };
    let settled = false;
    const uploads = Promise.all(bodies.map(upload)).finally(() => (settled = true));
    // Polled until every upload is answered (each client run: 50 warm-up polls, then 300 timed).
    const busy: number[] = [];
    while (!settled) busy.push(...await polls(poll, 300));
    const answers = await uploads;
    figures.stallMs = Math.max(...busy);
    out.row('idle server: poll p50 / p99 / max', `${percentile(idle, 50).toFixed(2)} / ${percentile(idle, 99).toFixed(2)} / ${Math.max(...idle).toFixed(1)} ms`);
    out.row('reading the e-mail and the PDF at once: poll p50 / p99 / max', `${percentile(busy, 50).toFixed(2)} / ${percentile(busy, 99).toFixed(2)} / ${figures.stallMs.toFixed(1)} ms (the longest stall a client saw)`);
    out.row('the uploads', answers.map((a, i) => `${bodies[i]!.name} ${a.status} in ${a.ms.toFixed(0)} ms${a.text ? ` (${a.text.slice(0, 80)})` : ''}`).join('; '));
  } finally {
    await server.stop();
  }
  return figures;
}
