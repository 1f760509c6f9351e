/**
 * Files in the web pages (issue 35), in headless Chromium against `oas serve` (a subprocess) on
 * loopback, every engine at the loopback fakes: an e-mail dropped on the analyze form is previewed
 * (a checkbox per observable, its type and where it was found; the team's own name unchecked with
 * the reason; SPF, DKIM and DMARC), one more observable is unchecked, and Analyze sends the file
 * with the checked values as multipart/form-data; the results page lists only those, each with
 * where it was found (table and cards), and the e-mail's authentication under the title. A CSV
 * with a hostile name and a hostile column header, chosen with the keyboard's file input, stays
 * text everywhere; a malformed PDF and a file over max_upload_bytes put the API's line in the
 * form's problem bar; and without a file the form sends the JSON of the spec, as before.
 * Screenshots go to test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { ExtractionPreview } from '../src/files/preview.js';
import type { AnalysisView, FilePreviewView } from '../src/view/types.js';
import { openPage, SCREENSHOTS, servedInChromium, skipReason } from './helpers/browser.js';
import { REPORTED_EML as EML, REPORTED_EML_INTERNAL } from './helpers/reported-eml.js';

const skip = skipReason();
if (skip) process.stderr.write(`browser file tests skipped: ${skip}\n`);

// The page reads the API's preview through the view's type: the two must agree.
const previewIsView = (preview: ExtractionPreview): FilePreviewView => preview;
void previewIsView;

/** A checkbox or file input as the page's scripts see it (the tests compile without the DOM's types). */
type Box = { checked: boolean; value: string; labels: Iterable<{ textContent: string | null }> };

/** A CSV whose name and second column's header are markup. */
const HOSTILE_NAME = '<img src=x onerror=window.__pwnedName=1>.csv';
const HOSTILE_COLUMN = '<img src=x onerror=window.__pwnedColumn=1>';
const CSV = `ip,${HOSTILE_COLUMN}\n45.155.205.233,<b>evil-host.net</b>\n193.42.33.7,\n`;

describe('files in Chromium', { skip, timeout: 180_000 }, () => {
  const suite = servedInChromium({ internal_domains: REPORTED_EML_INTERNAL, max_upload_bytes: 100_000 });
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  const open = () => openPage(suite.browser, { requests, consoleErrors });

  /** The form, with reverse_dns alone selected. */
  async function form(page: Page): Promise<void> {
    await page.goto(`${suite.server.url}/`);
    await page.locator('#engine-reverse_dns').waitFor();
    await page.click('.engine-actions button:text-is("Clear")');
    await page.check('#engine-reverse_dns');
  }

  /** The preview's rows: value, type, checked, the place text and the internal note. */
  async function previewRows(page: Page): Promise<{ value: string; type: string; checked: boolean; where: string; internal: string }[]> {
    return page.locator('#file-preview tbody tr').evaluateAll((rows) => rows.map((row) => ({
      value: row.querySelector('input')!.value,
      type: row.querySelector('.type')!.textContent ?? '',
      checked: (row.querySelector('input') as unknown as Box).checked,
      where: row.querySelector('.preview-where')!.textContent ?? '',
      internal: row.querySelector('.internal-note')?.textContent ?? '',
    })));
  }

  /**
   * Keeps, in the page, the fields of every form it posts (a file as its name and size): Chromium
   * does not hand the test a multipart body holding a file.
   */
  async function recordForms(page: Page): Promise<void> {
    await page.addInitScript(`(() => {
      window.__sentForms = [];
      const send = window.fetch;
      window.fetch = (input, init) => {
        if (init && init.body instanceof FormData) {
          window.__sentForms.push({ url: String(input), fields: [...init.body.entries()].map(([key, value]) => [key, typeof value === 'string' ? value : { name: value.name, size: value.size }]) });
        }
        return send(input, init);
      };
    })()`);
  }

  /** The fields of the last form posted to `path`. */
  async function sentForm(page: Page, path: string): Promise<Map<string, unknown>> {
    const forms = await page.evaluate('window.__sentForms') as { url: string; fields: [string, unknown][] }[];
    const form = forms.filter((f) => f.url.endsWith(path)).pop();
    assert.ok(form, `a form posted to ${path}`);
    return new Map(form.fields);
  }

  let emailAnalysis = '';

  test('an e-mail dropped on the form: the preview, the team\'s own unchecked, one more unchecked, Analyze sends the file with the checked ones', async () => {
    const { context, page } = await open();
    await recordForms(page);
    await form(page);
    const dataTransfer = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([${JSON.stringify(EML)}], 'invoice.eml', { type: 'message/rfc822' }));
      return transfer;
    })()`);
    await page.dispatchEvent('#analyze-form', 'dragenter', { dataTransfer });
    await page.dispatchEvent('#analyze-form', 'dragover', { dataTransfer });
    assert.match(await page.getAttribute('#analyze-form', 'class') ?? '', /\bdragging\b/, 'the form shows it takes the drop');
    const [extract] = await Promise.all([
      page.waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === '/api/extract'),
      page.dispatchEvent('#analyze-form', 'drop', { dataTransfer }),
    ]);
    assert.match(extract.headers()['content-type'] ?? '', /^multipart\/form-data; boundary=/);
    await page.locator('#file-preview').waitFor();
    assert.doesNotMatch(await page.getAttribute('#analyze-form', 'class') ?? '', /\bdragging\b/);

    assert.match(await page.innerText('#file-preview-title'), /^\d+ observables in invoice\.eml \(eml, \d/);
    const rows = await previewRows(page);
    const byValue = new Map(rows.map((r) => [r.value, r]));
    for (const value of ['billing@invoice-secure.net', 'invoice-secure.net', 'payments@collect-pay.org', '45.155.205.233', 'http://pay-invoice.net/login', 'intranet.acme-corp.com']) {
      assert.ok(byValue.has(value), `${value} in ${JSON.stringify(rows.map((r) => r.value))}`);
    }
    assert.equal(byValue.has('10.20.30.40'), false, 'a private Received hop is left out');
    assert.deepEqual(byValue.get('45.155.205.233'), { value: '45.155.205.233', type: 'IPv4', checked: true, where: 'Received header 1', internal: '' });
    assert.match(byValue.get('http://pay-invoice.net/login')!.where, /link in text body/);
    // The team's own names (the intranet, the receiving server): unchecked, with why; every other one checked.
    const own = byValue.get('intranet.acme-corp.com')!;
    assert.equal(own.checked, false);
    assert.match(own.internal, /^Not checked: the team's own \(intranet\.acme-corp\.com is under \.acme-corp\.com, an internal domain\)$/);
    for (const row of rows) assert.equal(row.checked, row.internal === '', `${row.value}: checked unless the team's own`);
    assert.ok(rows.filter((r) => !r.checked).every((r) => r.value.endsWith('acme-corp.com')), JSON.stringify(rows));
    // Each checkbox is labelled by its value and described by where it was found.
    const label = await page.locator('#file-preview input[value="45.155.205.233"]').evaluate((box) => [...(box as unknown as Box).labels].map((l) => l.textContent));
    assert.deepEqual(label, ['45.155.205.233']);

    // SPF, DKIM and DMARC as the e-mail's Authentication-Results says.
    assert.equal(await page.innerText('#file-email-auth [data-check="spf"]'), 'SPF fail');
    assert.equal(await page.innerText('#file-email-auth [data-check="dkim"]'), 'DKIM pass');
    assert.equal(await page.innerText('#file-email-auth [data-check="dmarc"]'), 'DMARC fail');
    assert.equal(await page.getAttribute('#file-email-auth [data-check="dkim"]', 'data-tone'), 'pass');
    assert.match(await page.innerText('#file-email-auth'), /\(by mx\.acme-corp\.com\)/);

    // One more unchecked, with the keyboard (Space on its checkbox).
    await page.focus('#file-preview input[value="payments@collect-pay.org"]');
    await page.keyboard.press('Space');
    assert.equal(await page.isChecked('#file-preview input[value="payments@collect-pay.org"]'), false);
    const checked = rows.filter((r) => r.checked && r.value !== 'payments@collect-pay.org').map((r) => r.value);
    assert.equal(await page.innerText('#file-preview-count'), `${checked.length} of ${rows.length} observables checked: Analyze sends only the checked ones.`);
    await page.locator('#file-field').screenshot({ path: join(SCREENSHOTS, 'files-preview.png') });

    // No text pasted: the file is enough.
    assert.equal(await page.inputValue('#text'), '');
    const [post] = await Promise.all([
      page.waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === '/api/analyze'),
      page.click('#submit'),
    ]);
    assert.match(post.headers()['content-type'] ?? '', /^multipart\/form-data; boundary=/);
    const sent = await sentForm(page, '/api/analyze');
    assert.deepEqual(sent.get('file'), { name: 'invoice.eml', size: EML.length });
    assert.deepEqual(JSON.parse(String(sent.get('observables'))), checked);
    assert.equal(sent.get('engines'), 'reverse_dns');
    assert.deepEqual([sent.get('tlp'), sent.get('pap'), sent.get('ignore_cache')], ['AMBER', 'GREEN', 'false']);
    assert.equal(sent.has('text'), false, 'no text field for an empty text');
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    emailAnalysis = page.url().split('/').pop()!;
    await context.close();
  });

  test('the results of the e-mail: only the checked observables, each with where it was found; SPF, DKIM and DMARC under the title', async () => {
    const { context, page } = await open();
    await page.goto(`${suite.server.url}/results/${emailAnalysis}#table`);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    const view = await (await fetch(`${suite.server.url}/ui/analyses/${emailAnalysis}`)).json() as AnalysisView;
    const shown = await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-observable')));
    assert.deepEqual(shown, view.observables.map((o) => o.observable));
    assert.ok(!shown.includes('payments@collect-pay.org'), 'the unchecked one was not analysed');
    assert.ok(!shown.includes('intranet.acme-corp.com'), 'nor the team\'s own');
    assert.ok(shown.includes('45.155.205.233') && shown.includes('http://pay-invoice.net/login'));
    const foundIn = (observable: string) => page.locator(`tbody tr[data-observable="${observable}"] .found-in`).innerText();
    assert.equal(await foundIn('45.155.205.233'), 'Found in: Received header 1');
    assert.match(await foundIn('invoice-secure.net'), /^Found in: .*Message-ID header/);
    // The API's results carry found_in too.
    const results = await (await fetch(`${suite.server.url}/api/results/${emailAnalysis}`)).json() as { observable: string; found_in?: string[] }[];
    assert.deepEqual(results.find((r) => r.observable === '45.155.205.233')?.found_in, ['Received header 1']);

    assert.equal(await page.innerText('#email-auth [data-check="spf"]'), 'SPF fail');
    assert.equal(await page.innerText('#email-auth [data-check="dkim"]'), 'DKIM pass');
    assert.equal(await page.innerText('#email-auth [data-check="dmarc"]'), 'DMARC fail');
    assert.match(await page.innerText('#analysis-meta'), / · from a file \(\.eml, \d+(\.\d)? (bytes|KB)\) · /);
    await page.screenshot({ path: join(SCREENSHOTS, 'files-results-table.png') });

    await page.click('button[data-view="cards"]');
    assert.equal(await page.locator('article[data-observable="45.155.205.233"] .found-in').innerText(), 'Found in: Received header 1');
    // The text filter finds an observable by where it was found.
    await page.fill('#results-filter', 'link in text body');
    assert.deepEqual(await page.locator('article.card').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-observable'))), ['http://pay-invoice.net/login']);
    await page.screenshot({ path: join(SCREENSHOTS, 'files-results-cards.png'), fullPage: true });
    await context.close();
  });

  test('a CSV with a hostile name and column, chosen with the file input: text everywhere; all unchecked is refused before sending', async () => {
    const { context, page } = await open();
    await form(page);
    await page.focus('#file');
    assert.deepEqual(await page.locator('#file').evaluate((input) => [...(input as unknown as Box).labels].map((l) => l.textContent)), ['File (optional)']);
    await page.setInputFiles('#file', { name: HOSTILE_NAME, mimeType: 'text/csv', buffer: Buffer.from(CSV) });
    await page.locator('#file-preview').waitFor();
    assert.equal(await page.innerText('#file-preview-title .file-name'), HOSTILE_NAME);
    const rows = await previewRows(page);
    assert.deepEqual(rows.map((r) => r.value), ['45.155.205.233', 'evil-host.net', '193.42.33.7']);
    assert.equal(rows[1]!.where, `row 2, column ${HOSTILE_COLUMN}`);
    assert.equal(await page.locator('main img').count(), 0, 'no markup from the file became an element');

    // Every one unchecked and no text: refused here, the focus on the first checkbox.
    await page.click('#file-uncheck-all');
    const before = requests.filter((url) => new URL(url).pathname === '/api/analyze').length;
    await page.click('#submit');
    await page.locator('#form-error:not([hidden])').waitFor();
    assert.equal(await page.innerText('#form-error'), 'Check at least one observable of the file, or paste some.');
    assert.equal(await page.evaluate('document.activeElement?.value'), '45.155.205.233');
    assert.equal(requests.filter((url) => new URL(url).pathname === '/api/analyze').length, before, 'nothing sent');

    await page.click('#file-check-all');
    await page.click('#submit');
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await page.locator('#analysis-status[data-complete="true"]').waitFor();
    assert.equal(await page.locator('tbody tr[data-observable="evil-host.net"] .found-in').innerText(), `Found in: row 2, column ${HOSTILE_COLUMN}`);
    assert.equal(await page.locator('#email-auth').count(), 0, 'no e-mail, no authentication line');
    assert.equal(await page.locator('#analysis-email-auth').isHidden(), true);
    await page.click('button[data-view="cards"]');
    assert.equal(await page.locator('article[data-observable="evil-host.net"] .found-in').innerText(), `Found in: row 2, column ${HOSTILE_COLUMN}`);
    assert.equal(await page.locator('main img').count(), 0);
    assert.deepEqual(await page.evaluate('[typeof window.__pwnedName, typeof window.__pwnedColumn]'), ['undefined', 'undefined']);
    await context.close();
    assert.deepEqual(consoleErrors, [], 'no console error (CSP included)');
  });

  test('a malformed PDF: the API\'s line in the problem bar, the focus on the file input; without a file the form sends JSON as before', async () => {
    const watch = { requests: [] as string[], consoleErrors: [] as string[] };
    const { context, page } = await openPage(suite.browser, watch);
    await form(page);
    await page.setInputFiles('#file', { name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.7\nnot really a PDF\n') });
    await page.locator('#form-error:not([hidden])').waitFor();
    assert.match(await page.innerText('#form-error'), /^The file could not be read: report\.pdf: not a readable PDF/);
    assert.equal(await page.evaluate('document.activeElement?.id'), 'file');
    assert.equal(await page.locator('#file-preview').count(), 0);
    assert.equal(await page.inputValue('#file'), '', 'the file is let go');
    await page.screenshot({ path: join(SCREENSHOTS, 'files-malformed.png') });

    // Over max_upload_bytes: the server's line, naming the setting.
    await page.setInputFiles('#file', { name: 'huge.txt', mimeType: 'text/plain', buffer: Buffer.alloc(150_000, 'a') });
    await page.locator('#form-error:not([hidden])', { hasText: /^The file is too large/ }).waitFor();
    assert.match(await page.innerText('#form-error'), /^The file is too large: .*max_upload_bytes \(100000/);
    assert.equal(await page.evaluate('document.activeElement?.id'), 'file');

    await page.fill('#text', 'example.com');
    const [post] = await Promise.all([
      page.waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === '/api/analyze'),
      page.click('#submit'),
    ]);
    assert.match(post.headers()['content-type'] ?? '', /^application\/json/);
    assert.deepEqual(post.postDataJSON(), { text: 'example.com', engines: ['reverse_dns'], ignore_cache: false, tlp: 'AMBER', pap: 'GREEN' });
    await page.waitForURL(/\/results\/[0-9a-f-]{36}$/);
    await context.close();
  });
});
