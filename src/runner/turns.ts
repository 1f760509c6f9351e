/**
 * Waiters admitted one at a time, in the fair order of src/runner/fair-queue.ts: a quota's calls
 * (this process's, or the team's on Redis). `admit` resolves when the next call may start (it
 * waits for the window, asks Redis...); the waiter it admits is chosen only then, so one who
 * arrived during the wait may still go first if the fair order says so.
 *
 * A call started holds its place in the window until the window has passed it: so the next slot
 * goes to whoever has the fewest calls in the current window (a newcomer before a bulk analysis
 * that used the window up), and two bulk analyses take turns.
 */
import { FairQueue, type Holding, type Share } from './fair-queue.js';

/** Told of each wait: how long, why (one line), and whether it is a 429's pause (else the quota). */
export type QuotaWaitListener = (ms: number, reason: string, paused: boolean) => void;

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
  onWait: QuotaWaitListener | undefined;
}

export class FairTurns {
  private readonly queue = new FairQueue<Waiter>();
  /** The calls started in the current window, oldest first, each holding its share's place. */
  private readonly held: { at: number; holding: Holding }[] = [];
  private draining = false;

  /**
   * @param admit resolves (or returns) when the next waiter may go, or throws to refuse it (the
   *   refusal is that waiter's; the next one is then asked about afresh). `tell` reaches the
   *   waiter next in line.
   * @param windowMs how long a started call counts to its share (the quota's window); 0 or
   *   Infinity: not at all (an engine without a quota only waits out a 429's pause).
   */
  constructor(
    private readonly admit: (tell: QuotaWaitListener) => Promise<void> | void,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Waiting calls. */
  get size(): number {
    return this.queue.size;
  }

  /** Counts a call of `share` that started without waiting. */
  started(share: Share | undefined): void {
    if (!this.holds) return;
    this.forgetPast();
    this.held.push({ at: this.now(), holding: this.queue.take(share) });
  }

  private get holds(): boolean {
    return this.windowMs > 0 && Number.isFinite(this.windowMs);
  }

  /** Gives back the places of the calls the window has passed. */
  private forgetPast(): void {
    const past = this.now() - this.windowMs;
    while (this.held.length > 0 && this.held[0]!.at <= past) this.queue.release(this.held.shift()!.holding);
  }

  /** Resolves when this call's turn has come and `admit` let it go. */
  wait(share: Share | undefined, onWait: QuotaWaitListener | undefined): Promise<void> {
    const turn = new Promise<void>((resolve, reject) => this.queue.push(share, { resolve, reject, onWait }));
    void this.drain();
    return turn;
  }

  private readonly tell: QuotaWaitListener = (ms, reason, paused) => {
    const next = this.queue.peek();
    try {
      next?.onWait?.(ms, reason, paused);
    } catch {
      // A listener's failure is not the call's.
    }
  };

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.size > 0) {
        let refused: { error: unknown } | undefined;
        try {
          await this.admit(this.tell);
        } catch (error) {
          refused = { error };
        }
        if (refused) {
          this.queue.shift()!.item.reject(refused.error);
          continue;
        }
        if (!this.holds) {
          this.queue.shift()!.item.resolve();
          continue;
        }
        this.forgetPast();
        const next = this.queue.shift(true)!;
        this.held.push({ at: this.now(), holding: next.holding });
        next.item.resolve();
      }
    } finally {
      this.draining = false;
    }
  }
}
