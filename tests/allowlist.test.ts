/**
 * Issue 38, the allowlist's rules (src/marking/allowlist.ts): what a person may write as an entry
 * (an observable, a CIDR range, `*.domain`, a hash) and how it is normalised, expiries (durations
 * and ISO 8601 times, never in the past), and which observables an entry covers: exact values
 * case-insensitively where the type is, `*.corp.example` for the name itself, every name under it
 * and URLs on them, ranges for addresses and URLs on them; expired entries cover nothing.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Allowlist, AllowlistError, isActive, parseAllowValue, parseExpiry, type AllowEntry } from '../src/marking/allowlist.js';
import type { Observable } from '../src/observables/types.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const entry = (value: string, extra: Partial<AllowEntry> = {}): AllowEntry => ({ value, reason: `because ${value}`, by: 'alice', at: '2026-11-20T09:00:00.000Z', expires: null, ...extra });
const o = (type: Observable['type'], value: string): Observable => ({ type, value });

describe('what an entry may be', () => {
  test('observables, ranges, domain patterns and hashes, normalised', () => {
    assert.deepEqual(parseAllowValue(' 8.8.8.8 '), { kind: 'observable', value: '8.8.8.8' });
    assert.deepEqual(parseAllowValue('Login.Example.ORG.'), { kind: 'observable', value: 'login.example.org' });
    assert.deepEqual(parseAllowValue('evil[.]example[.]com'), { kind: 'observable', value: 'evil.example.com' }, 'refanged');
    assert.deepEqual(parseAllowValue('hxxps://intranet[.]example/x'), { kind: 'observable', value: 'https://intranet.example/x' });
    assert.deepEqual(parseAllowValue('Bob@Corp.Example.COM'), { kind: 'observable', value: 'bob@corp.example.com' });
    assert.deepEqual(parseAllowValue('2001:DB8:0:0::1'), { kind: 'observable', value: '2001:db8::1' });
    assert.deepEqual(parseAllowValue('10.20.3.4/16'), { kind: 'cidr', value: '10.20.0.0/16' }, 'the network of the range');
    assert.deepEqual(parseAllowValue('2001:db8::5/32'), { kind: 'cidr', value: '2001:db8::/32' });
    assert.deepEqual(parseAllowValue('*.Corp.Example'), { kind: 'domain', value: '*.corp.example' });
    assert.deepEqual(parseAllowValue('44D88612FEA8A8F36DE82E1278ABB02F'), { kind: 'hash', value: '44d88612fea8a8f36de82e1278abb02f' });
  });

  test('anything else is refused in one line naming what is accepted', () => {
    for (const [value, message] of [
      ['', /needs a value/],
      ['not an observable', /is no observable: write an IP address, a domain/],
      ['10.0.0.0/33', /is no CIDR range/],
      ['*.com', /is no domain pattern/],
      ['*.bad_label.example', /is no domain pattern/],
      ['8.8.8.8 1.1.1.1', /is no observable/],
    ] as const) {
      assert.throws(() => parseAllowValue(value), (error: Error) => error instanceof AllowlistError && message.test(error.message) && !error.message.includes('\n'), value);
    }
  });
});

describe('expiries', () => {
  test('durations and ISO 8601 times, as ISO 8601', () => {
    assert.equal(parseExpiry('90s', NOW), '2026-11-29T12:01:30.000Z');
    assert.equal(parseExpiry('10m', NOW), '2026-11-29T12:10:00.000Z');
    assert.equal(parseExpiry('12h', NOW), '2026-11-30T00:00:00.000Z');
    assert.equal(parseExpiry('30d', NOW), '2026-12-29T12:00:00.000Z');
    assert.equal(parseExpiry('2w', NOW), '2026-12-13T12:00:00.000Z');
    assert.equal(parseExpiry('2026-12-31', NOW), '2026-12-31T00:00:00.000Z');
    assert.equal(parseExpiry('2026-12-31T18:00:00+01:00', NOW), '2026-12-31T17:00:00.000Z');
  });

  test('neither a duration nor a time, or in the past: refused', () => {
    assert.throws(() => parseExpiry('soon', NOW), /neither a duration \(90s, 10m, 12h, 30d, 2w\) nor an ISO 8601 time/);
    assert.throws(() => parseExpiry('30x', NOW), /neither a duration/);
    assert.throws(() => parseExpiry('2026-11-01', NOW), /is in the past/);
    assert.throws(() => parseExpiry('0s', NOW), /is in the past/);
  });

  test('an entry applies until its expiry', () => {
    assert.equal(isActive({ expires: null }, NOW), true);
    assert.equal(isActive({ expires: '2026-11-29T12:00:01.000Z' }, NOW), true);
    assert.equal(isActive({ expires: '2026-11-29T12:00:00.000Z' }, NOW), false);
  });
});

describe('what an entry covers', () => {
  const list = new Allowlist([
    entry('8.8.8.8'),
    entry('login.example.org'),
    entry('bob@corp.example.com'),
    entry('10.20.0.0/16'),
    entry('2001:db8::/32'),
    entry('*.corp.example'),
    entry('44d88612fea8a8f36de82e1278abb02f'),
    entry('*.expired.example', { expires: '2026-11-28T00:00:00.000Z' }),
    entry('1.1.1.1', { expires: '2026-11-28T00:00:00.000Z' }),
  ]);

  const covered = (observable: Observable) => list.match(observable, NOW)?.value;

  test('exact values, case-insensitively where the type is', () => {
    assert.equal(covered(o('IPv4', '8.8.8.8')), '8.8.8.8');
    assert.equal(covered(o('FQDN', 'LOGIN.example.org')), 'login.example.org');
    assert.equal(covered(o('FQDN', 'www.login.example.org')), undefined, 'an exact name covers no name under it');
    assert.equal(covered(o('URL', 'https://login.example.org/x')), undefined, 'nor a URL on it');
    assert.equal(covered(o('Email', 'Bob@Corp.Example.com')), 'bob@corp.example.com');
    assert.equal(covered(o('MD5', '44D88612FEA8A8F36DE82E1278ABB02F')), '44d88612fea8a8f36de82e1278abb02f');
  });

  test('*.corp.example: the name itself, every name under it, URLs on them; not a look-alike', () => {
    assert.equal(covered(o('FQDN', 'corp.example')), '*.corp.example');
    assert.equal(covered(o('FQDN', 'a.b.corp.example')), '*.corp.example');
    assert.equal(covered(o('URL', 'https://wiki.corp.example/page')), '*.corp.example');
    assert.equal(covered(o('FQDN', 'evilcorp.example')), undefined);
    assert.equal(covered(o('FQDN', 'corp.example.evil.example')), undefined);
  });

  test('ranges: addresses inside them, and URLs on such an address', () => {
    assert.equal(covered(o('IPv4', '10.20.255.1')), '10.20.0.0/16');
    assert.equal(covered(o('IPv4', '10.21.0.1')), undefined);
    assert.equal(covered(o('IPv6', '2001:db8:1::7')), '2001:db8::/32');
    assert.equal(covered(o('IPv6', '::ffff:10.20.1.1')), '10.20.0.0/16', 'an IPv4-mapped address is its IPv4 address');
    assert.equal(covered(o('URL', 'http://10.20.1.1:8080/admin')), '10.20.0.0/16');
  });

  test('an expired entry covers nothing', () => {
    assert.equal(covered(o('IPv4', '1.1.1.1')), undefined);
    assert.equal(covered(o('FQDN', 'www.expired.example')), undefined);
    assert.equal(covered(o('IPv4', '8.8.8.8')), '8.8.8.8');
    assert.equal(list.match(o('IPv4', '1.1.1.1'), Date.parse('2026-11-27T00:00:00Z'))?.value, '1.1.1.1', 'before its expiry it did');
    assert.equal(list.size, 9);
  });

  test('an empty list covers nothing', () => {
    assert.equal(new Allowlist([]).match(o('IPv4', '8.8.8.8'), NOW), undefined);
  });
});
