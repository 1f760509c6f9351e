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
    const holding = this.active < this.limit ? this.take(share) : await this.wait(share);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(holding);
    };
  }

  /** `task` once a slot is free (at once when one is: no turn of the microtask queue), then the slot freed. */
  run<T>(task: () => Promise<T>, share?: Share): Promise<T> {
    if (this.active < this.limit) return this.hold(task, this.take(share));
    return this.wait(share).then((holding) => this.hold(task, holding));
  }

  private async hold<T>(task: () => Promise<T>, holding: Holding): Promise<T> {
    try {
      return await task();
    } finally {
      this.release(holding);
    }
  }

  private take(share: Share | undefined): Holding {
    this.active++;
    return this.waiting.take(share);
  }

  private wait(share: Share | undefined): Promise<Holding> {
    return new Promise<Holding>((grant) => this.waiting.push(share, grant));
  }

  private release(holding: Holding): void {
    this.waiting.release(holding);
    const next = this.waiting.shift(true);
    if (next) next.item(next.holding); // the slot passes straight to the next waiter
    else this.active--;
  }
}
