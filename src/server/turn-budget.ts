/**
 * The CPU a large request body costs on the server's thread, spread over the turns of the event
 * loop (issue 33). Checking a 1 MiB body (JSON.parse, the schema, 10 000 engine names) takes a few
 * ms; under 32 clients uploading such bodies, dozens of them finished arriving in the same turn
 * and were all checked in it, and a poll or a small 400 arriving meanwhile waited the whole turn.
 *
 * A large body's check asks for a place (`enter`) and gives it back (`done`) once its synchronous
 * part is over: the checks of one turn stop once they have used `budgetMs`, and those waiting go
 * on at the next turn (in order), after the I/O of that turn, polls included, has been served.
 */

export interface TurnBudget {
  /** Resolves with `done` once this check may run: at once when the turn has time left. */
  enter(): Promise<() => void>;
  /** Checks waiting for a turn (tests). */
  waiting(): number;
}

/** What the checks of one turn may use (ms). */
const BUDGET_MS = 16;

export function createTurnBudget(budgetMs = BUDGET_MS): TurnBudget {
  const waiting: ((done: () => void) => void)[] = [];
  /** When the current turn's checks began; undefined: no check in this turn yet. */
  let turnStarted: number | undefined;
  /** A check is running (between its place and its `done`). */
  let running = false;
  let scheduled = false;

  const newTurn = () => {
    scheduled = false;
    turnStarted = undefined;
    next();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(newTurn);
  };
  const next = () => {
    if (running || waiting.length === 0) return;
    if (turnStarted !== undefined && performance.now() - turnStarted >= budgetMs) {
      schedule();
      return;
    }
    turnStarted ??= performance.now();
    running = true;
    // The turn ends with this setImmediate at the latest: the next turn starts a new budget.
    schedule();
    waiting.shift()!(doneOnce());
  };
  const doneOnce = () => {
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      running = false;
      next();
    };
  };

  return {
    enter: () => new Promise((resolve) => {
      waiting.push(resolve);
      next();
    }),
    waiting: () => waiting.length,
  };
}
