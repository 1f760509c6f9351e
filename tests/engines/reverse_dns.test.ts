import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import * as dnsPacket from 'dns-packet';
import engine, { reverseDnsLookup } from '../../engines/reverse_dns.js';
import { createEngineContext, resolveSettings } from '../../src/engine/context.js';
import { HttpTransport } from '../../src/http/client.js';
import { startFakeDns, type FakeDnsServer, type Zone } from '../fakes/dns.js';
import { engineHarness, type EngineHarness } from '../helpers/engine.js';
import { rejectsWith } from '../helpers/assert.js';

/** 2001:db8::1 under ip6.arpa, written out by hand so the test does not trust the code it checks. */
const V6_PTR = '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa';

const zone: Zone = {
  'example.com': { A: ['93.184.215.14', '93.184.215.15'], AAAA: ['2606:2800::1'], MX: ['10 mx.example.com'] },
  'www.example.com': { CNAME: 'example.com' },
  'v6only.example.org': { AAAA: ['2001:db8::80'] },
  'mail-only.example.org': { MX: ['10 mx.example.org'] },
  // Asymmetric octets: the reversed name differs from the address read forwards.
  '10.2.0.192.in-addr.arpa': { PTR: ['host-a.example.net', 'host-b.example.net'] },
  '192.0.2.10.in-addr.arpa': { PTR: ['wrong-order.example.net'] },
  [V6_PTR]: { PTR: ['v6.example.net'] },
  '5.0.0.10.in-addr.arpa': { PTR: ['printer.corp.internal'] },
  'broken.example': { A: ['192.0.2.1'] },
};

/** Asserts a rejection with a one-line message matching `pattern`. */

describe('reverse_dns declaration', () => {
  test('catalog fields', () => {
    assert.equal(engine.id, 'reverse_dns');
    assert.equal(engine.service, 'reverse_dns');
    assert.equal(engine.label, 'Reverse DNS');
    assert.deepEqual(engine.tags, ['default', 'domain', 'IP', 'the service', 'free_no_key']);
    assert.deepEqual(engine.types, ['IPv4', 'IPv6', 'FQDN', 'URL']);
    assert.equal(engine.pivot, true);
    assert.equal(engine.acceptsPrivateIp, true);
    assert.equal(engine.defaults.timeout_ms, 5000);
    assert.equal(engine.run, reverseDnsLookup);
  });

  test('summary shows three answers, then a count', () => {
    assert.equal(engine.summary({ reverse_dns: ['93.184.215.14', '2606:2800::1'] }), '93.184.215.14, 2606:2800::1');
    assert.equal(engine.summary({ reverse_dns: ['a', 'b', 'c', 'd', 'e'] }), 'a, b, c +2 more');
  });

  test('details: addresses split IPv4 / IPv6, or the PTR names', () => {
    assert.deepEqual(engine.details!({ reverse_dns: ['93.184.215.14', '93.184.215.15', '2606:2800::1'] }, 'example.com'), [
      { label: 'IPv4 addresses', value: '93.184.215.14, 93.184.215.15' },
      { label: 'IPv6 addresses', value: '2606:2800::1' },
    ]);
    assert.deepEqual(engine.details!({ reverse_dns: ['2001:db8::80'] }, 'v6only.example.org'), [
      { label: 'IPv6 addresses', value: '2001:db8::80' },
    ]);
    // A URL with an IP host: its target is the URL, its answers PTR names.
    assert.deepEqual(engine.details!({ reverse_dns: ['host-a.example.net', 'host-b.example.net'] }, 'http://192.0.2.10/x'), [
      { label: 'PTR names', value: 'host-a.example.net, host-b.example.net' },
    ]);
  });
});

describe('reverse_dns against a loopback DNS server', () => {
  let dns: FakeDnsServer;
  let harness: EngineHarness;

  before(async () => {
    dns = await startFakeDns(zone, { servfail: ['broken.example'] });
    harness = engineHarness(engine, { dnsServers: [dns.address] });
  });
  after(async () => {
    await harness.close();
    await dns.close();
  });

  test('FQDN: A records in answer order, then AAAA', async () => {
    dns.queries.length = 0;
    assert.deepEqual(await harness.run('example.com', 'FQDN'), {
      reverse_dns: ['93.184.215.14', '93.184.215.15', '2606:2800::1'],
    });
    assert.deepEqual(
      dns.queries.map((q) => `${q.name} ${q.type}`).sort(),
      ['example.com A', 'example.com AAAA'],
    );
  });

  test('FQDN: case and trailing dot do not matter', async () => {
    assert.deepEqual(await harness.run('Example.COM.', 'FQDN'), {
      reverse_dns: ['93.184.215.14', '93.184.215.15', '2606:2800::1'],
    });
  });

  test('FQDN behind a CNAME: the addresses of its target', async () => {
    assert.deepEqual(await harness.run('www.example.com', 'FQDN'), {
      reverse_dns: ['93.184.215.14', '93.184.215.15', '2606:2800::1'],
    });
  });

  test('FQDN with IPv6 only', async () => {
    assert.deepEqual(await harness.run('v6only.example.org', 'FQDN'), { reverse_dns: ['2001:db8::80'] });
  });

  test('URL: the host is resolved (port, path and query ignored)', async () => {
    dns.queries.length = 0;
    assert.deepEqual(await harness.run('https://www.example.com:8443/login?next=/home', 'URL'), {
      reverse_dns: ['93.184.215.14', '93.184.215.15', '2606:2800::1'],
    });
    assert.ok(dns.queries.every((q) => q.name === 'www.example.com'));
  });

  test('IPv4: every PTR name, without trailing dot, asked under the reversed name', async () => {
    dns.queries.length = 0;
    assert.deepEqual(await harness.run('192.0.2.10', 'IPv4'), {
      reverse_dns: ['host-a.example.net', 'host-b.example.net'],
    });
    assert.deepEqual(dns.queries, [{ name: '10.2.0.192.in-addr.arpa', type: 'PTR' }]);
  });

  test('IPv6: PTR asked under the nibble name in ip6.arpa', async () => {
    dns.queries.length = 0;
    assert.deepEqual(await harness.run('2001:db8::1', 'IPv6'), { reverse_dns: ['v6.example.net'] });
    assert.deepEqual(dns.queries, [{ name: V6_PTR, type: 'PTR' }]);
  });

  test('private IP: looked up too', async () => {
    assert.deepEqual(await harness.run('10.0.0.5', 'IPv4'), { reverse_dns: ['printer.corp.internal'] });
  });

  test('URL with an IPv4 literal: PTR of the address', async () => {
    assert.deepEqual(await harness.run('http://192.0.2.10/admin', 'URL'), {
      reverse_dns: ['host-a.example.net', 'host-b.example.net'],
    });
  });

  test('URL with an IPv6 literal: PTR of the address', async () => {
    dns.queries.length = 0;
    assert.deepEqual(await harness.run('http://[2001:db8::1]:8080/x', 'URL'), { reverse_dns: ['v6.example.net'] });
    assert.deepEqual(dns.queries, [{ name: V6_PTR, type: 'PTR' }]);
  });

  test('NXDOMAIN: null', async () => {
    assert.equal(await harness.run('no-such-name.example.com', 'FQDN'), null);
  });

  test('name without address records: null', async () => {
    assert.equal(await harness.run('mail-only.example.org', 'FQDN'), null);
  });

  test('IP without PTR: null', async () => {
    assert.equal(await harness.run('198.51.100.7', 'IPv4'), null);
  });

  test('SERVFAIL: an error naming it', async () => {
    await rejectsWith(harness.run('broken.example', 'FQDN'), /^DNS server failure \(SERVFAIL\)$/);
  });
});

/**
 * A DNS server answering each question with `answer(name, type)`: answers (type, data) and an
 * rcode. For what the shared fake cannot say: a failure for one record type only, duplicates.
 */
async function startScriptedDns(answer: (name: string, type: string) => { rcode: number; answers: { type: string; data: string }[] }): Promise<{ address: string; socket: Socket }> {
  const socket = createSocket('udp4');
  socket.on('message', (message, peer) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    const { rcode, answers } = answer(question.name.replace(/\.$/, '').toLowerCase(), question.type);
    socket.send(dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
      questions: [question],
      answers: answers.map((a) => ({ name: question.name, type: a.type, ttl: 60, data: a.data }) as dnsPacket.Answer),
    }), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${socket.address().port}`, socket };
}

describe('reverse_dns: minimal and degenerate answers', () => {
  const SERVFAIL = 2;
  let scripted: { address: string; socket: Socket };
  let harness: EngineHarness;

  before(async () => {
    scripted = await startScriptedDns((name, type) => {
      if (name === 'a-only.example' && type === 'A') return { rcode: 0, answers: [{ type: 'A', data: '192.0.2.1' }] };
      if (name === 'a-only.example' && type === 'AAAA') return { rcode: SERVFAIL, answers: [] };
      if (name === 'v6-fails.example' && type === 'AAAA') return { rcode: SERVFAIL, answers: [] };
      if (name === 'v6-fails.example') return { rcode: 0, answers: [] };
      if (name === 'twice.example' && type === 'A') {
        return { rcode: 0, answers: [{ type: 'A', data: '192.0.2.7' }, { type: 'A', data: '192.0.2.8' }, { type: 'A', data: '192.0.2.7' }] };
      }
      if (name === '10.2.0.192.in-addr.arpa' && type === 'PTR') {
        return { rcode: 0, answers: [{ type: 'PTR', data: 'Host-A.example.net' }, { type: 'PTR', data: 'host-a.example.net' }, { type: 'PTR', data: 'host-b.example.net' }] };
      }
      if (name === '11.2.0.192.in-addr.arpa' && type === 'PTR') return { rcode: 0, answers: [{ type: 'PTR', data: '.' }] };
      return { rcode: 0, answers: [] };
    });
    harness = engineHarness(engine, { dnsServers: [scripted.address] });
  });
  after(async () => {
    await harness.close();
    await new Promise<void>((resolve) => scripted.socket.close(() => resolve()));
  });

  test('AAAA failing while A answers: the A addresses (the reference asked A only)', async () => {
    assert.deepEqual(await harness.run('a-only.example', 'FQDN'), { reverse_dns: ['192.0.2.1'] });
  });

  test('AAAA failing and no A address: the AAAA failure', async () => {
    await rejectsWith(harness.run('v6-fails.example', 'FQDN'), /^DNS server failure \(SERVFAIL\)$/);
  });

  test('an address answered twice is listed once, in answer order', async () => {
    assert.deepEqual(await harness.run('twice.example', 'FQDN'), { reverse_dns: ['192.0.2.7', '192.0.2.8'] });
  });

  test('PTR names: once each whatever their case, the first spelling kept; a root-only name is no name', async () => {
    assert.deepEqual(await harness.run('192.0.2.10', 'IPv4'), { reverse_dns: ['Host-A.example.net', 'host-b.example.net'] });
    assert.equal(await harness.run('192.0.2.11', 'IPv4'), null);
  });
});

describe('reverse_dns failures', () => {
  let silent: FakeDnsServer;
  before(async () => {
    silent = await startFakeDns(zone, { silent: true });
  });
  after(() => silent.close());

  test('a server that never answers: timeout within the call budget', async () => {
    const harness = engineHarness(engine, { dnsServers: [silent.address], settings: { timeout_ms: 300 } });
    const started = Date.now();
    try {
      await rejectsWith(harness.run('example.com', 'FQDN'), new RegExp(`^DNS timeout after 300 ms waiting for ${silent.address.replace(/\./g, '\\.')}$`));
      assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
      assert.ok(silent.queries.length > 0, 'the query reached the server');
    } finally {
      await harness.close();
    }
  });

  test('an abandoned analysis cancels the pending query at once', async () => {
    const transport = new HttpTransport();
    const abandon = new AbortController();
    const settings = resolveSettings(engine, {});
    const { ctx, dispose } = createEngineContext(engine, settings, {
      transport,
      dnsServers: [silent.address],
      dataDir: '/nonexistent',
      storeFor: () => ({ get: async () => undefined, set: async () => {} }),
    }, { signal: abandon.signal });
    setTimeout(() => abandon.abort(), 100);
    const started = Date.now();
    try {
      await rejectsWith(engine.run({ value: '192.0.2.10', type: 'IPv4' }, ctx), /^DNS lookup cancelled$/);
      assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
    } finally {
      dispose();
      await transport.close();
    }
  });

  test('nothing listening on the port: connection refused', async () => {
    // A port that was free a moment ago: loopback answers with ICMP port unreachable.
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    const harness = engineHarness(engine, { dnsServers: [`127.0.0.1:${port}`], settings: { timeout_ms: 2000 } });
    try {
      await rejectsWith(harness.run('192.0.2.10', 'IPv4'), new RegExp(`^DNS connection refused by 127\\.0\\.0\\.1:${port} \\(check dns_servers\\)$`));
    } finally {
      await harness.close();
    }
  });

  test('an invalid dns_servers entry: a clear error', async () => {
    const harness = engineHarness(engine, { dnsServers: ['not-an-address'] });
    try {
      await rejectsWith(harness.run('example.com', 'FQDN'), /invalid DNS server setting: not-an-address/);
    } finally {
      await harness.close();
    }
  });
});
