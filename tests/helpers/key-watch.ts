/**
 * For the tests of an engine that takes a key: every result and error message the tests get back
 * is recorded, and a last test checks that none of them holds the key.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { EngineDefinition } from '../../src/engine/contract.js';
import { rejectsWith, type RejectionCheck } from './assert.js';
import { engineHarness, type EngineHarness } from './engine.js';
import type { FakeHttpServer } from '../fakes/http.js';

export class KeyWatch {
  readonly outputs: string[] = [];

  constructor(readonly key: string) {}

  /** Records a result (or anything shown to a user) and returns it. */
  result<T>(value: T): T {
    this.outputs.push(JSON.stringify(value));
    return value;
  }

  /** `rejectsWith` from assert.ts, with the key as the secret, recording the message. */
  async rejectsWith(promise: Promise<unknown>, pattern: RegExp, check: Omit<RejectionCheck, 'secret'> = {}): Promise<void> {
    await rejectsWith(promise.catch((error: Error) => {
      this.outputs.push(error.message);
      throw error;
    }), pattern, { ...check, secret: this.key });
  }

  /** The same harness, recording every result and error of its runs. */
  watch(harness: EngineHarness): EngineHarness {
    return {
      ...harness,
      run: async (value, type) => {
        try {
          return this.result(await harness.run(value, type));
        } catch (error) {
          this.outputs.push(String((error as Error).message), JSON.stringify(error));
          throw error;
        }
      },
    };
  }

  /** The closing test: at least `min` outputs were collected and none holds the key. */
  assertNoKey(min: number): void {
    assert.ok(this.outputs.length >= min, `outputs collected: ${this.outputs.length}`);
    for (const output of this.outputs) assert.ok(!output.includes(this.key), `key leaked in: ${output}`);
  }
}

/**
 * Harnesses whose base_url is `<fake>/<prefix>`, with the key (as `api_key`, or the `setting`
 * given) unless settings say otherwise; recorded by `watch` when given; all closed after the suite.
 */
export function prefixHarnesses(
  engine: EngineDefinition,
  fake: () => FakeHttpServer,
  key: string,
  options: { setting?: string; watch?: KeyWatch } = {},
): (prefix: string, settings?: Record<string, unknown>) => EngineHarness {
  const harnesses: EngineHarness[] = [];
  after(async () => {
    await Promise.all(harnesses.map((h) => h.close()));
  });
  return (prefix, settings = {}) => {
    const h = engineHarness(engine, { settings: { base_url: `${fake().url}/${prefix}`, [options.setting ?? 'api_key']: key, ...settings } });
    harnesses.push(h);
    return options.watch ? options.watch.watch(h) : h;
  };
}

/**
 * The suite every IP engine's whole-system fake passes: it answers any address, IPv4 or IPv6,
 * and receives the key. `check` asserts on each result; `keyOf` reads the key from a request.
 */
export function describeIpFake<R>(options: {
  engine: EngineDefinition;
  key: string;
  start: () => Promise<FakeHttpServer>;
  settings: (url: string) => Record<string, unknown>;
  check: (result: R, ip: string) => void;
  keyOf: (request: FakeHttpServer['requests'][number]) => unknown;
}): void {
  describe(`${options.engine.id} fake for whole-system tests`, () => {
    let fake: FakeHttpServer;
    let h: EngineHarness;
    after(async () => {
      await h?.close();
      await fake?.close();
    });

    test('answers any address', async () => {
      fake = await options.start();
      h = engineHarness(options.engine, { settings: { ...options.settings(fake.url), api_key: options.key } });
      const ips = ['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111'];
      for (const ip of ips) options.check((await h.run(ip, ip.includes(':') ? 'IPv6' : 'IPv4')) as R, ip);
      assert.deepEqual(fake.requests.map(options.keyOf), ips.map(() => options.key));
    });
  });
}
