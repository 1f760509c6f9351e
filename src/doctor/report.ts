/**
 * What `oas doctor` says (issue 40): one check per line, `ok` or `FAIL` with the error in the
 * engines' words and what to fix, a first line saying what the engine checks cost, and a last line
 * counting the failures. The same report is `oas doctor --json` and the answer of `POST
 * {prefix}doctor`: its messages hold no secret (the checks redact them before).
 */

/** What a check looks at. */
export type CheckKind = 'data_dir' | 'redis' | 'proxy' | 'dns' | 'engine';

export interface DoctorCheck {
  kind: CheckKind;
  /** Which one: the folder, Redis's address, the proxy's host:port, the DNS server, the engine's id. */
  target: string;
  /** The engine's service name, for an engine whose id is another (`shodan` for provider_20). */
  service?: string;
  ok: boolean;
  /** What was seen (`ok`), or the error in one line with what to fix. */
  message: string;
}

export interface DoctorReport {
  /** Every check passed. */
  ok: boolean;
  /** Requests made to the engines' upstreams: at most one per engine checked. */
  calls: number;
  /** The engines checked (the usable ones, or those of `--engines`). */
  engines: number;
  checks: DoctorCheck[];
  /** What `oas doctor` prints (reportLines): the web page shows these. */
  lines: string[];
}

const KIND_LABELS: Record<CheckKind, string> = {
  data_dir: 'data folder',
  redis: 'Redis',
  proxy: 'proxy',
  dns: 'DNS server',
  engine: 'engine',
};

/** `ok    engine provider_20 (shodan): answered` or `FAIL  Redis redis://127.0.0.1:6379: ...`. */
export function checkLine(check: DoctorCheck): string {
  const name = check.service && check.service !== check.target ? `${check.target} (${check.service})` : check.target;
  return `${check.ok ? 'ok  ' : 'FAIL'}  ${KIND_LABELS[check.kind]} ${name}: ${check.message}`.replace(/[\r\n\t]+/g, ' ');
}

/**
 * The cost, said first: `one call per engine: 17 engines checked, 15 HTTP requests made` (the DNS
 * engines ask their DNS servers instead).
 */
export function costLine(report: Pick<DoctorReport, 'engines' | 'calls'>): string {
  return `one call per engine: ${report.engines} engine${report.engines === 1 ? '' : 's'} checked, ${report.calls} HTTP request${report.calls === 1 ? '' : 's'} made`;
}

/** `all 21 checks passed` or `2 of 21 checks failed`. */
export function summaryLine(report: Pick<DoctorReport, 'checks'>): string {
  const failed = report.checks.filter((c) => !c.ok).length;
  const total = report.checks.length;
  return failed === 0 ? `all ${total} check${total === 1 ? '' : 's'} passed` : `${failed} of ${total} check${total === 1 ? '' : 's'} failed`;
}

/** The whole report as text lines (without line ends). */
export function reportLines(report: Omit<DoctorReport, 'lines'>): string[] {
  return [costLine(report), ...report.checks.map(checkLine), summaryLine(report)];
}
