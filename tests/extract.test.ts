import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { extractObservables, identifyObservable, isValidFqdn } from '../src/observables/extract.js';
import { refang } from '../src/observables/refang.js';

/** Compact `TYPE:value` form so expectations read in one line. */
function ex(text: string): string[] {
  return extractObservables(text).map((o) => `${o.type}:${o.value}`);
}

const MD5 = 'd41d8cd98f00b204e9800998ecf8427e';
const SHA1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
const SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

describe('refang', () => {
  test('schemes', () => {
    assert.equal(refang('hxxp://a hXXps://b h**p://c HXXPS://d'), 'http://a https://b http://c https://d');
    assert.equal(refang('[https]://a.com hxxp[:]//b.com hxxps[://]c.com'), 'https://a.com http://b.com https://c.com');
  });

  test('dots, with optional spaces', () => {
    for (const s of ['evil[.]com', 'evil(.)com', 'evil{.}com', 'evil[dot]com', 'evil(dot)com', 'evil{dot}com', 'evil[DOT]com', 'evil\\.com', 'evil [.] com', 'evil [ . ] com']) {
      assert.equal(refang(s), 'evil.com', s);
    }
    assert.equal(refang('1[,]2[,]3[,]4'), '1.2.3.4');
  });

  test('at signs, slashes and colons', () => {
    for (const s of ['user[at]example.com', 'user(at)example.com', 'user{at}example.com', 'user[@]example.com', 'user(@)example.com', 'user [AT] example.com']) {
      assert.equal(refang(s), 'user@example.com', s);
    }
    assert.equal(refang('http[:]//a.com[/]x'), 'http://a.com/x');
    assert.equal(refang('http:\\/\\/a.com\\/x'), 'http://a.com/x');
  });

  test('leaves prose alone', () => {
    const prose = 'Meet me at the dot com party at 5. See (note) [1] and {x}.';
    assert.equal(refang(prose), prose);
  });
});

describe('extractObservables: types', () => {
  test('each type is recognised', () => {
    assert.deepEqual(ex('ip 8.8.8.8'), ['IPv4:8.8.8.8']);
    assert.deepEqual(ex('ip 2001:db8::1'), ['IPv6:2001:db8::1']);
    assert.deepEqual(ex('domain www.example.com'), ['FQDN:www.example.com']);
    assert.deepEqual(ex('url https://example.com/a'), ['URL:https://example.com/a']);
    assert.deepEqual(ex(`md5 ${MD5}`), [`MD5:${MD5}`]);
    assert.deepEqual(ex(`sha1 ${SHA1}`), [`SHA1:${SHA1}`]);
    assert.deepEqual(ex(`sha256 ${SHA256}`), [`SHA256:${SHA256}`]);
    assert.deepEqual(ex('mail john.doe+x@example.com'), ['Email:john.doe+x@example.com']);
  });

  test('returns Observable objects', () => {
    assert.deepEqual(extractObservables('1.2.3.4'), [{ value: '1.2.3.4', type: 'IPv4' }]);
  });

  test('no observable -> []', () => {
    assert.deepEqual(extractObservables(''), []);
    assert.deepEqual(extractObservables('   \n\t'), []);
    assert.deepEqual(extractObservables('Nothing to see here, e.g. version 1.2.3 at 12:30.'), []);
  });
});

describe('extractObservables: defanged input', () => {
  test('the usual defangs', () => {
    assert.deepEqual(ex('hxxps://www[.]example[.]com/login'), ['URL:https://www.example.com/login']);
    assert.deepEqual(ex('evil[.]com'), ['FQDN:evil.com']);
    assert.deepEqual(ex('user[at]example[.]com'), ['Email:user@example.com']);
    assert.deepEqual(ex('1[.]2[.]3[.]4'), ['IPv4:1.2.3.4']);
    assert.deepEqual(ex('example(.)org'), ['FQDN:example.org']);
    assert.deepEqual(ex('8.8.8[.]8'), ['IPv4:8.8.8.8']);
    assert.deepEqual(ex('example [.] com, user [at] example [dot] net'), ['FQDN:example.com', 'Email:user@example.net']);
    assert.deepEqual(ex('hxxp[:]//evil[.]com[/]path'), ['URL:http://evil.com/path']);
  });
});

describe('extractObservables: a pasted alert', () => {
  test('mixed observables in first-appearance order', () => {
    const alert = [
      'ALERT 2024-05-01 12:30:45 UTC - severity high',
      `Host 10.0.0.5 downloaded ${SHA256} from hxxps://cdn[.]evil-site[.]com/dl/payload.bin?id=42#x.`,
      'The sample (invoice.exe) beaconed to 2001:4860:4860::8888 and to 185.220.101.4:443;',
      `phishing mail from billing[at]paypa1-secure[.]com, attachment md5 ${MD5.toUpperCase()}.`,
      `Related: ${MD5}, ${SHA1}, see also evil-site.com and http://185.220.101.4/gate.php`,
    ].join('\n');
    assert.deepEqual(ex(alert), [
      'IPv4:10.0.0.5',
      `SHA256:${SHA256}`,
      'URL:https://cdn.evil-site.com/dl/payload.bin?id=42#x',
      'IPv6:2001:4860:4860::8888',
      'IPv4:185.220.101.4',
      'Email:billing@paypa1-secure.com',
      `MD5:${MD5.toUpperCase()}`,
      `SHA1:${SHA1}`,
      'FQDN:evil-site.com',
      'URL:http://185.220.101.4/gate.php',
    ]);
  });
});

describe('extractObservables: better than the reference', () => {
  test('IPv4 octets are validated; dotted version strings are not IPs', () => {
    assert.deepEqual(ex('999.1.1.1 256.0.0.1 1.2.3.4.5 v1.2.3.4 010.1.1.1'), []);
    assert.deepEqual(ex('range 10.0.0.1-10.0.0.255, net 192.168.0.0/16.'), [
      'IPv4:10.0.0.1',
      'IPv4:10.0.0.255',
      'IPv4:192.168.0.0',
    ]);
  });

  test('compressed IPv6 is extracted whole', () => {
    assert.deepEqual(ex('2001:db8::1 fe80::1 2001:4860:4860::8888 ::1'), [
      'IPv6:2001:db8::1',
      'IPv6:fe80::1',
      'IPv6:2001:4860:4860::8888',
      'IPv6:::1',
    ]);
    assert.deepEqual(ex('mapped ::ffff:192.168.1.1.'), ['IPv6:::ffff:192.168.1.1']);
    assert.deepEqual(ex('2001:0db8:0000:0000:0000:ff00:0042:8329'), ['IPv6:2001:0db8:0000:0000:0000:ff00:0042:8329']);
  });

  test('times, MAC addresses and trailing colons are handled', () => {
    assert.deepEqual(ex('at 12:30:45 from 00:1a:2b:3c:4d:5e'), []);
    assert.deepEqual(ex('blocked 2001:db8::1: ok'), ['IPv6:2001:db8::1']);
  });

  test('URLs keep query strings, fragments and ports', () => {
    assert.deepEqual(ex('https://www.example.com/path?x=1&y=2#f'), ['URL:https://www.example.com/path?x=1&y=2#f']);
    assert.deepEqual(ex('http://example.com:8080/a?q=1,2'), ['URL:http://example.com:8080/a?q=1,2']);
    assert.deepEqual(ex('http://[2001:db8::1]:8080/x'), ['URL:http://[2001:db8::1]:8080/x']);
  });

  test('URLs lose trailing punctuation and stop at delimiters', () => {
    assert.deepEqual(ex('Go to https://a.com/x. Or (see http://b.com/y) or "http://c.com/z"!'), [
      'URL:https://a.com/x',
      'URL:http://b.com/y',
      'URL:http://c.com/z',
    ]);
    assert.deepEqual(ex('<https://d.com/p>, `http://e.com/q`; http://f.com/w_(x)'), [
      'URL:https://d.com/p',
      'URL:http://e.com/q',
      'URL:http://f.com/w_(x)',
    ]);
    assert.deepEqual(ex('ftp://files.example.com/a'), ['FQDN:files.example.com']);
  });

  test('angle brackets: kept in a path or query (XSS probes), cut at HTML around a URL', () => {
    assert.deepEqual(ex('WAF blocked GET https://shop.example.com/search?q=<script>alert(1)</script> from 203.0.113.9'), [
      'URL:https://shop.example.com/search?q=<script>alert(1)</script>',
      'IPv4:203.0.113.9',
    ]);
    assert.deepEqual(ex('<b>http://a.com/page</b> http://b.com/x> http://c.com<br> http://d.com/p<br/> <https://e.com/q>'), [
      'URL:http://a.com/page',
      'URL:http://b.com/x',
      'URL:http://c.com',
      'URL:http://d.com/p',
      'URL:https://e.com/q',
    ]);
  });

  test('file-extension pseudo-domains are rejected, real ccTLDs kept', () => {
    assert.deepEqual(ex('report.pdf invoice.exe script.py setup.msi Invoice.EXE run.ps1'), []);
    assert.deepEqual(ex('shop.example.com.py'), ['FQDN:shop.example.com.py']);
  });

  test('unknown or private suffixes are rejected', () => {
    assert.deepEqual(ex('host.local foo.invalidtld server.corp user@host.local'), []);
    assert.equal(isValidFqdn('example.co.uk'), true);
    assert.equal(isValidFqdn('co.uk'), false);
  });

  test('the domain of an e-mail is not reported again', () => {
    assert.deepEqual(ex('From: alice@Example.ORG'), ['Email:alice@example.org']);
  });

  test('the host of a URL is not reported again, unless also standalone', () => {
    assert.deepEqual(ex('https://www.example.com/x'), ['URL:https://www.example.com/x']);
    assert.deepEqual(ex('https://www.example.com/x and www.example.com'), [
      'URL:https://www.example.com/x',
      'FQDN:www.example.com',
    ]);
  });

  test('an IPv4 or a hash inside a URL is not reported again', () => {
    assert.deepEqual(ex('http://1.2.3.4:8080/a'), ['URL:http://1.2.3.4:8080/a']);
    assert.deepEqual(ex(`https://example.com/files/${MD5}`), [`URL:https://example.com/files/${MD5}`]);
  });

  test('hashes: exact lengths, no adjacent letters or digits', () => {
    assert.deepEqual(ex(`${MD5}0 x${MD5} ${MD5.slice(1)}`), []);
    assert.deepEqual(ex(`sample ${MD5}.exe`), [`MD5:${MD5}`]);
    assert.deepEqual(ex(SHA256), [`SHA256:${SHA256}`]);
  });

  test('comma-separated URL lists are split', () => {
    assert.deepEqual(ex('http://a.com/x,https://b.com/y'), ['URL:http://a.com/x', 'URL:https://b.com/y']);
  });
});

describe('extractObservables: de-duplication', () => {
  test('case-insensitive for domains, hashes, e-mails and IPv6', () => {
    assert.deepEqual(ex('Example.COM example.com. EXAMPLE.com'), ['FQDN:example.com']);
    assert.deepEqual(ex(`${MD5.toUpperCase()} ${MD5}`), [`MD5:${MD5.toUpperCase()}`]);
    assert.deepEqual(ex('Bob@example.com bob@EXAMPLE.com'), ['Email:Bob@example.com']);
    assert.deepEqual(ex('2001:DB8::1 2001:db8::1'), ['IPv6:2001:DB8::1']);
    assert.deepEqual(ex('1.2.3.4 1[.]2[.]3[.]4'), ['IPv4:1.2.3.4']);
  });

  test('URLs: scheme and host case-insensitive, path exact', () => {
    assert.deepEqual(ex('HTTP://Example.com/A http://example.com/A http://example.com/a'), [
      'URL:HTTP://Example.com/A',
      'URL:http://example.com/a',
    ]);
  });
});

describe('extractObservables: large and hostile input', () => {
  // Speed is measured by `npm run bench`; here only the answers on 1 MB inputs are checked.
  test('1 MB of repeated alert text gives each indicator once; degenerate shapes give nothing', () => {
    const alert = `Host 8.8.4.4 hit hxxps://evil[.]com/a?b=1 and 2001:db8::1 dropping ${MD5} (x.exe) from a@b.example.org. `;
    const mb = 1 << 20;
    assert.deepEqual(ex(alert.repeat(Math.floor(mb / alert.length))), [
      'IPv4:8.8.4.4', 'URL:https://evil.com/a?b=1', 'IPv6:2001:db8::1', `MD5:${MD5}`, 'Email:a@b.example.org',
    ]);
    for (const text of ['a.'.repeat(mb / 2), '1.'.repeat(mb / 2), 'a:'.repeat(mb / 2), ' '.repeat(mb) + '[.]', 'f'.repeat(mb)]) {
      assert.deepEqual(extractObservables(text), []);
    }
  });
});

describe('extractObservables: Chrome / Edge extension ids (engines.md 2.1, 9.5.1)', () => {
  const ID = 'cjpalhdlnbpafiamejdnhcphjbkeiagm'; // uBlock Origin on the Chrome Web Store
  const EDGE_ID = 'odfafepnkmbhccpbejgmiehpchacaeak'; // uBlock Origin on Edge Add-ons
  const ext = (id: string) => `CHROME_EXTENSION:${id}`;

  test('32 lowercase letters, a whole word: CHROME_EXTENSION', () => {
    assert.deepEqual(extractObservables(ID), [{ value: ID, type: 'CHROME_EXTENSION' }]);
    assert.deepEqual(ex(`extension ${ID} installed`), [ext(ID)]);
    for (const text of [`"${ID}",`, `(${ID})`, `[${ID}]`, `id=${ID};`, `${ID}.`, `'${ID}'`, `${ID}-1.2.3`, `\u201c${ID}\u201d`, `\u00ab${ID}\u00bb`]) {
      assert.deepEqual(ex(text), [ext(ID)], text);
    }
  });

  test('any of a-z, as the reference (real ids only use a-p)', () => {
    assert.deepEqual(ex('abcdefghijklmnopqrstuvwxyzabcdef'), [ext('abcdefghijklmnopqrstuvwxyzabcdef')]);
  });

  test('where ids are found: store links (URL and id), chrome-extension:// addresses, profile paths, .crx files', () => {
    assert.deepEqual(ex(`https://chromewebstore.google.com/detail/ublock-origin/${ID}`), [
      `URL:https://chromewebstore.google.com/detail/ublock-origin/${ID}`,
      ext(ID),
    ]);
    assert.deepEqual(ex(`https://chrome.google.com/webstore/detail/ublock-origin/${ID}?hl=en`), [
      `URL:https://chrome.google.com/webstore/detail/ublock-origin/${ID}?hl=en`,
      ext(ID),
    ]);
    assert.deepEqual(ex(`https://microsoftedge.microsoft.com/addons/detail/ublock-origin/${EDGE_ID}`), [
      `URL:https://microsoftedge.microsoft.com/addons/detail/ublock-origin/${EDGE_ID}`,
      ext(EDGE_ID),
    ]);
    assert.deepEqual(ex(`chrome-extension://${ID}/popup.html`), [ext(ID)]);
    assert.deepEqual(ex(`C:\\Users\\bob\\AppData\\Local\\Google\\Chrome\\User Data\\Default\\Extensions\\${ID}\\1.62.0_0\\manifest.json`), [ext(ID)]);
    assert.deepEqual(ex(`~/.config/google-chrome/Default/Extensions/${EDGE_ID}/1.0_0/`), [ext(EDGE_ID)]);
    assert.deepEqual(ex(`dropped ${ID}.crx`), [ext(ID)]);
  });

  test('defanged store links are refanged; the id is never altered by refanging', () => {
    assert.deepEqual(ex(`hxxps://chromewebstore[.]google[.]com/detail/x/${ID}`), [
      `URL:https://chromewebstore.google.com/detail/x/${ID}`,
      ext(ID),
    ]);
    assert.deepEqual(ex(`hxxps[://]microsoftedge[.]microsoft[.]com/addons/detail/${EDGE_ID}`), [
      `URL:https://microsoftedge.microsoft.com/addons/detail/${EDGE_ID}`,
      ext(EDGE_ID),
    ]);
    assert.deepEqual(ex('hxxpdotatjklmnopqrstuvwxyzabcdef'), [ext('hxxpdotatjklmnopqrstuvwxyzabcdef')]);
  });

  test('not ids: other lengths, uppercase or mixed case, glued to a letter, digit or underscore', () => {
    const texts = [
      ID.slice(1), `${ID}p`, ID.toUpperCase(), `${ID.slice(0, 16).toUpperCase()}${ID.slice(16)}`, `C${ID}`,
      `${ID}0`, `9${ID}`, `_${ID}`, `${ID}_`, `\u00e9${ID}`, `${ID}\u00df`, `\u{1d400}${ID}`,
      'pneumonoultramicroscopicsilicovolcanoconiosis', 'abcdefghijklmnop'.repeat(3),
    ];
    for (const text of texts) assert.deepEqual(ex(text), [], text);
  });

  test('hashes: 32 letters a-f only are an MD5 (tried first), in a URL nothing more than the URL', () => {
    const hexLetters = 'abcdefabcdefabcdefabcdefabcdefab';
    assert.deepEqual(ex(hexLetters), [`MD5:${hexLetters}`]);
    assert.deepEqual(ex(`https://example.com/${hexLetters}`), [`URL:https://example.com/${hexLetters}`]);
    assert.deepEqual(ex(`md5 ${MD5} ext ${ID} sha1 ${SHA1}`), [`MD5:${MD5}`, ext(ID), `SHA1:${SHA1}`]);
  });

  test('a label of a domain or the local part of an e-mail address stays part of it', () => {
    assert.deepEqual(ex(`${ID}.example.com`), [`FQDN:${ID}.example.com`]);
    assert.deepEqual(ex(`${ID}@example.com`), [`Email:${ID}@example.com`]);
    assert.deepEqual(ex(`https://${ID}.example.com/`), [`URL:https://${ID}.example.com/`]);
  });

  test('de-duplicated, in first-appearance order, with every other type unchanged', () => {
    assert.deepEqual(ex(`${ID} https://chromewebstore.google.com/detail/u/${ID} ${ID}`), [
      ext(ID),
      `URL:https://chromewebstore.google.com/detail/u/${ID}`,
    ]);
    const alert = [
      `EDR: extension ${ID} (uBlock) and ${EDGE_ID} loaded on host 10.0.0.5 by bob@example.com;`,
      `it called hxxps://evil[.]example[.]net/c2?id=${ID} and 2001:db8::1, dropped ${SHA256}.`,
      `Store: https://chromewebstore.google.com/detail/x/${EDGE_ID}, domain evil-site.com, md5 ${MD5}.`,
    ].join('\n');
    assert.deepEqual(ex(alert), [
      ext(ID),
      ext(EDGE_ID),
      'IPv4:10.0.0.5',
      'Email:bob@example.com',
      `URL:https://evil.example.net/c2?id=${ID}`,
      'IPv6:2001:db8::1',
      `SHA256:${SHA256}`,
      `URL:https://chromewebstore.google.com/detail/x/${EDGE_ID}`,
      'FQDN:evil-site.com',
      `MD5:${MD5}`,
    ]);
  });

  test('large input: 1 MB of letters gives nothing, 1 MB of repeated ids gives one', () => {
    const mb = 1 << 20;
    assert.deepEqual(extractObservables('g'.repeat(mb)), []);
    assert.deepEqual(ex(`${ID} `.repeat(Math.floor(mb / 33))), [ext(ID)]);
  });

  test('identifyObservable: exactly one id', () => {
    assert.deepEqual(identifyObservable(` ${ID} `), { value: ID, type: 'CHROME_EXTENSION' });
    assert.deepEqual(identifyObservable('abcdefabcdefabcdefabcdefabcdefab'), { value: 'abcdefabcdefabcdefabcdefabcdefab', type: 'MD5' });
    for (const v of [`${ID}.`, ID.toUpperCase(), `${ID} ${EDGE_ID}`, ID.slice(1), `${ID}x`]) assert.equal(identifyObservable(v), null, v);
  });
});

describe('identifyObservable', () => {
  test('classifies one whole value', () => {
    assert.deepEqual(identifyObservable(' 8.8.8.8 '), { value: '8.8.8.8', type: 'IPv4' });
    assert.deepEqual(identifyObservable('fe80::1'), { value: 'fe80::1', type: 'IPv6' });
    assert.deepEqual(identifyObservable('Evil[.]COM'), { value: 'evil.com', type: 'FQDN' });
    assert.deepEqual(identifyObservable('example.com.'), { value: 'example.com', type: 'FQDN' });
    assert.deepEqual(identifyObservable('hxxp://evil[.]com/x?y=1'), { value: 'http://evil.com/x?y=1', type: 'URL' });
    assert.deepEqual(identifyObservable(MD5), { value: MD5, type: 'MD5' });
    assert.deepEqual(identifyObservable(SHA1), { value: SHA1, type: 'SHA1' });
    assert.deepEqual(identifyObservable(SHA256), { value: SHA256, type: 'SHA256' });
    assert.deepEqual(identifyObservable('user[at]example[.]com'), { value: 'user@example.com', type: 'Email' });
  });

  test('null for anything that is not exactly one observable', () => {
    for (const v of ['', '  ', 'hello', '999.1.1.1', '1.2.3.4:80', '1.2.3.4 5.6.7.8', 'report.pdf', 'host.local', '12:30:45', `${MD5}x`]) {
      assert.equal(identifyObservable(v), null, v);
    }
  });
});
