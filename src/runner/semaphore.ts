/**
 * Counting semaphore: at most `limit` holders at once. Waiters are served in the fair order of
 * src/runner/fair-queue.ts (across owners, then analyses, then arrival); those of one share, or
 * without a share, first come, first served.
 */
import { FairQueue, type Holding, type Share } from './fair-queue.js';

type Grant = (holding: Holding) => void;

export class Semaphore {
  private active = 0;
  private readonly waiting = new FairQueue<Grant>();

  constructor(readonly limit: number) {}

  /** Calls waiting for a slot. */
  get pending(): number {
    return this.waiting.size;
  }

  async acquire(share?: Share): Promise<() => void> {
    let holding: Holding;
    if (this.active >= this.limit) holding = await new Promise<Holding>((grant) => this.waiting.push(share, grant));
    else {
      this.active++;
      holding = this.waiting.take(share);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.waiting.release(holding);
      const next = this.waiting.shift(true);
      if (next) next.item(next.holding); // the slot passes straight to the next waiter
      else this.active--;
    };
  }

  async run<T>(task: () => Promise<T>, share?: Share): Promise<T> {
    const release = await this.acquire(share);
    try {
      return await task();
    } finally {
      release();
    }
  }
}
