/**
 * The fair order in which waiting engine calls get a slot (a concurrency slot, a quota's call):
 * first across owners (the person or API client who started the analysis), then across that
 * owner's analyses, then first come, first served within one analysis.
 *
 * At each level the next slot goes to whoever holds the fewest slots now, and among equals to the
 * one served longest ago (one never served first). So an analysis with one call waiting is served
 * before the next call of one with thousands, two bulk analyses converge to equal shares, one
 * person's ten bulk analyses share one person's part, and nobody is starved: whoever waits is
 * served within one turn of each other waiting owner and analysis. Calls without a share (the
 * CLI's single analysis) are one flow, served in arrival order.
 */

/** Whose call it is: the fairness keys of its analysis. */
export interface Share {
  /** Who started the analysis (a user's name, `anonymous`, `cli`...). */
  readonly owner: string;
  /** The analysis id. */
  readonly analysis: string;
}

const NOBODY: Share = { owner: '', analysis: '' };

/** A first-in, first-out list with O(1) removal at the head. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Drop the consumed head once it is half the array: amortised O(1), bounded memory.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/** What the fair choice compares at each level. */
interface Standing {
  /** Slots held now. */
  active: number;
  /** Sequence number of its last service (0: never served). */
  served: number;
}

class AnalysisFlow<T> implements Standing {
  active = 0;
  served = 0;
  readonly waiting = new Fifo<T>();
  constructor(readonly owner: OwnerFlows<T>, readonly id: string) {}
}

class OwnerFlows<T> implements Standing {
  active = 0;
  served = 0;
  /** This owner's analyses with a slot or a waiter (forgotten once they have neither). */
  readonly analyses = new Map<string, AnalysisFlow<T>>();
  /** Those of them with a waiter. */
  readonly ready = new Set<AnalysisFlow<T>>();
  constructor(readonly id: string) {}
}

/** Whether `a` goes before `b`: fewer slots held, then served longer ago. */
const before = (a: Standing, b: Standing) => a.active < b.active || (a.active === b.active && a.served < b.served);

function first<S extends Standing>(candidates: Iterable<S>): S | undefined {
  let best: S | undefined;
  for (const candidate of candidates) if (!best || before(candidate, best)) best = candidate;
  return best;
}

/** A handle on what one call holds: give it back with `FairQueue.release`. */
export type Holding = object;

/**
 * Waiting items in fair order, and the slots each owner and analysis holds. `push` queues an
 * item, `shift` takes the next one in the fair order and counts a slot to its share (`take` counts
 * one for a call that did not wait), `release` gives a slot back.
 */
export class FairQueue<T> {
  private readonly owners = new Map<string, OwnerFlows<T>>();
  /** Owners with a waiter. */
  private readonly ready = new Set<OwnerFlows<T>>();
  private sequence = 0;
  private count = 0;

  /** Items waiting. */
  get size(): number {
    return this.count;
  }

  push(share: Share | undefined, item: T): void {
    const flow = this.flowOf(share ?? NOBODY);
    flow.waiting.push(item);
    flow.owner.ready.add(flow);
    this.ready.add(flow.owner);
    this.count++;
  }

  /** The item `shift` would take, left in place. */
  peek(): T | undefined {
    const owner = first(this.ready);
    return owner ? first(owner.ready)!.waiting.peek() : undefined;
  }

  /**
   * Takes the next item in the fair order. With `hold`, a slot is counted to its share until
   * `release(holding)`; without, the item is only marked served (a quota's call: nothing to give back).
   */
  shift(hold: true): { item: T; holding: Holding } | undefined;
  shift(hold?: false): { item: T } | undefined;
  shift(hold = false): { item: T; holding?: Holding } | undefined {
    const owner = first(this.ready);
    if (!owner) return undefined;
    const flow = first(owner.ready)!;
    const item = flow.waiting.shift() as T;
    this.count--;
    if (flow.waiting.size === 0) {
      owner.ready.delete(flow);
      if (owner.ready.size === 0) this.ready.delete(owner);
    }
    owner.served = flow.served = ++this.sequence;
    if (!hold) {
      this.forgetIfIdle(flow);
      return { item };
    }
    flow.active++;
    owner.active++;
    return { item, holding: flow };
  }

  /** Counts a slot to `share` for a call that got one without waiting. */
  take(share: Share | undefined): Holding {
    const flow = this.flowOf(share ?? NOBODY);
    flow.active++;
    flow.owner.active++;
    flow.owner.served = flow.served = ++this.sequence;
    return flow;
  }

  /** Gives back the slot of `holding` (from `shift(true)` or `take`). */
  release(holding: Holding): void {
    const flow = holding as AnalysisFlow<T>;
    flow.active--;
    flow.owner.active--;
    this.forgetIfIdle(flow);
  }

  private flowOf(share: Share): AnalysisFlow<T> {
    let owner = this.owners.get(share.owner);
    if (!owner) {
      owner = new OwnerFlows<T>(share.owner);
      this.owners.set(share.owner, owner);
    }
    let flow = owner.analyses.get(share.analysis);
    if (!flow) {
      flow = new AnalysisFlow<T>(owner, share.analysis);
      owner.analyses.set(share.analysis, flow);
    }
    return flow;
  }

  /** An analysis (and owner) with nothing held or waiting is forgotten: memory stays bounded. */
  private forgetIfIdle(flow: AnalysisFlow<T>): void {
    if (flow.active > 0 || flow.waiting.size > 0) return;
    const owner = flow.owner;
    owner.analyses.delete(flow.id);
    if (owner.analyses.size === 0) this.owners.delete(owner.id);
  }
}
