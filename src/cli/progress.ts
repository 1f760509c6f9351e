/**
 * What `oas analyze` says on standard error while it runs (never on standard output).
 *
 * On a terminal: a spinner with the lookups done / total, the engines still being waited on, and
 * every quota or Retry-After wait with its remaining time, counted down. Elsewhere (a pipe, a log
 * file, or a terminal showing `--format jsonl` lines): one line per wait longer than
 * `WAIT_LINE_MS`, such as `waiting 57 s for virustotal quota (4/minute)` or
 * `waiting 30 s: virustotal asked to retry later (429)`. `--quiet`: nothing at all. An upstream's
 * reason or a custom engine's name holding a control character shows it as an escape (`\x1b`).
 */
import type { Progress, WaitEvent } from '../runner/types.js';
import { inert } from '../text/inert.js';

/** Off the spinner, a wait is told when it is longer than this. */
export const WAIT_LINE_MS = 5000;
/** How often the spinner's countdowns are redrawn. */
const TICK_MS = 1000;

export interface ProgressOptions {
  observables: number;
  /** The engines as selected: the key the caller used and the service name shown. */
  selections: readonly { key: string; service: string }[];
  /** A spinner (standard error is a terminal and no jsonl lines are shown on it), else lines. */
  spinner: boolean;
  /** `--quiet`: nothing at all. */
  quiet: boolean;
  /** Colours on the spinner. */
  color: boolean;
  /** Standard error (tests give another stream). */
  stream?: NodeJS.WritableStream & { columns?: number };
  now?: () => number;
}

export interface ProgressDisplay {
  update(progress: Progress): void;
  stop(): void;
}

/** `4/minute`, `1/6 s`, `500/day`: a quota as people say it. */
export function describeRate(limit: number, windowMs: number): string {
  const units: [number, string, string][] = [[86_400_000, 'day', 'days'], [3_600_000, 'hour', 'h'], [60_000, 'minute', 'min'], [1000, 'second', 's']];
  for (const [ms, one, many] of units) {
    if (windowMs % ms === 0) return windowMs === ms ? `${limit}/${one}` : `${limit}/${windowMs / ms} ${many}`;
  }
  return `${limit}/${windowMs} ms`;
}

/**
 * One line for a wait, `remainingMs` from its end (default: the whole wait):
 * `waiting 57 s for virustotal quota (4/minute)`, `waiting 30 s: virustotal asked to retry later (429)`.
 */
export function describeWait(wait: WaitEvent, remainingMs = wait.ms): string {
  const seconds = `${Math.max(0, Math.ceil(remainingMs / 1000))} s`;
  if (wait.kind === 'quota') {
    const rate = wait.limit !== undefined && wait.windowMs !== undefined ? ` (${describeRate(wait.limit, wait.windowMs)})` : '';
    return `waiting ${seconds} for ${wait.service} quota${rate}`;
  }
  if (wait.status !== undefined) return `waiting ${seconds}: ${wait.service} asked to retry later (${wait.status})`;
  return `waiting ${seconds}: ${wait.service} failed (${wait.reason}), retrying`;
}

/** Whether stderr can show a spinner: a terminal that reports its width (with 0 columns ora would redraw forever). */
export function canSpin(): boolean {
  return Boolean(process.stderr.isTTY) && process.stderr.columns > 0;
}

/**
 * The progress display of one analysis (undefined when `--quiet`). The spinner's module (ora) is
 * loaded only when a spinner is shown: scripts piping JSON don't pay for it.
 */
export async function startProgress(options: ProgressOptions): Promise<ProgressDisplay | undefined> {
  if (options.quiet) return undefined;
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  const state = new ProgressState(options.selections, options.observables);
  if (!options.spinner) {
    return {
      update: (p) => {
        const line = state.update(p, now());
        if (line !== undefined) stream.write(`${line}\n`);
      },
      stop: () => {},
    };
  }
  const { default: ora } = await import('ora');
  const engines = new Set(options.selections.map((s) => s.key)).size;
  const label = `Analyzing ${options.observables} observable(s) with ${engines} engine(s)`;
  const spinner = ora({ text: label, stream: stream as NodeJS.WriteStream, color: options.color ? 'cyan' : false }).start();
  let last: Progress | undefined;
  const draw = () => {
    spinner.text = state.text(label, last, now(), (stream.columns ?? 80) - 3);
  };
  // The countdowns move on even when nothing else happens.
  const timer = setInterval(draw, TICK_MS);
  timer.unref();
  return {
    update: (p) => {
      last = p;
      state.update(p, now());
      draw();
    },
    stop: () => {
      clearInterval(timer);
      spinner.stop();
    },
  };
}

/** Lookups left per engine and the waits under way, from the runner's progress events. */
export class ProgressState {
  /** Lookups not finished yet, by selection key. */
  private readonly left = new Map<string, number>();
  private readonly service = new Map<string, string>();
  /** The waits under way, by engine and kind (the latest end of each). */
  private readonly waits = new Map<string, WaitEvent>();
  /** The end of the last wait told as a line, by engine and kind (concurrent calls share one). */
  private readonly told = new Map<string, number>();

  constructor(selections: readonly { key: string; service: string }[], observables: number) {
    for (const { key, service } of selections) {
      this.left.set(key, observables);
      this.service.set(key, service);
    }
  }

  /** Takes an event in; returns the line to print off a terminal, if it deserves one. */
  update(progress: Progress, now: number): string | undefined {
    if (progress.finished !== undefined) {
      const left = this.left.get(progress.finished);
      if (left !== undefined) this.left.set(progress.finished, Math.max(0, left - 1));
    }
    const wait = progress.wait;
    if (wait === undefined) return undefined;
    const id = `${wait.engine}\u0000${wait.kind}`;
    const current = this.waits.get(id);
    if (!current || current.until < wait.until) this.waits.set(id, wait);
    if (wait.ms <= WAIT_LINE_MS) return undefined;
    // Calls waiting for the same quota or the same Retry-After at once: told once.
    const told = this.told.get(id);
    if (told !== undefined && wait.until <= told + TICK_MS) return undefined;
    this.told.set(id, wait.until);
    return inert(describeWait(wait, Math.max(0, wait.until - now)));
  }

  /** The service names of the engines with lookups left, in selection order. */
  pending(): string[] {
    const names = [...this.left].filter(([, left]) => left > 0).map(([key]) => this.service.get(key) ?? key);
    return [...new Set(names)];
  }

  /** The waits not over yet, soonest end first. */
  activeWaits(now: number): WaitEvent[] {
    for (const [id, wait] of this.waits) if (wait.until <= now) this.waits.delete(id);
    return [...this.waits.values()].sort((a, b) => a.until - b.until);
  }

  /**
   * The spinner's text: `label: 3/8 done · waiting on virustotal, urlscan`, then one line per wait
   * under way with its remaining time; each line at most `width` characters.
   */
  text(label: string, progress: Progress | undefined, now: number, width: number): string {
    const max = Math.max(20, width);
    const head = progress ? `${label}: ${progress.done}/${progress.total} done` : label;
    const pending = this.pending();
    const lines = [fit(pending.length > 0 && progress && progress.done < progress.total ? `${head} · waiting on ${pending.join(', ')}` : head, max)];
    for (const wait of this.activeWaits(now)) lines.push(fit(`  ${describeWait(wait, wait.until - now)}`, max));
    return lines.join('\n');
  }
}

/** The line, inert, cut to `width` characters, with an ellipsis. */
function fit(text: string, width: number): string {
  const line = inert(text);
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}
