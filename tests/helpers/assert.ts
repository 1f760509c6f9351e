/** Assertions shared by the engine tests. */
import assert from 'node:assert/strict';

type ErrorClass = new (...args: never[]) => Error;

export interface RejectionCheck {
  /** The error must be an instance of this class. */
  type?: ErrorClass;
  /** The message must not contain this (a key, a token). */
  secret?: string;
}

/** The promise rejects with a one-line message matching `pattern` (what the runner shows). */
export async function rejectsWith(promise: Promise<unknown>, pattern: RegExp, check: RejectionCheck | ErrorClass = {}): Promise<void> {
  const { type, secret } = typeof check === 'function' ? { type: check, secret: undefined } : check;
  await assert.rejects(promise, (error: Error) => {
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes('\n'), `one line: ${error.message}`);
    if (type) assert.ok(error instanceof type, `${error.name} is a ${type.name}: ${error.message}`);
    if (secret) assert.ok(!error.message.includes(secret), `no secret in: ${error.message}`);
    return true;
  });
}
