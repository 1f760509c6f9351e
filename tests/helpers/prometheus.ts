/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4, what
 * `Content-Type: text/plain; version=0.0.4` promises), for the tests of GET /metrics. No Go
 * toolchain here for Prometheus's own parser (expfmt), and the npm parsers are lenient, so this
 * checks every line against the format as Prometheus documents it, and throws on the first
 * departure, naming the line:
 *
 * - lines end with `\n` (the last one too), no `\r`; blank lines are allowed;
 * - `# HELP <name> <text>` (escapes `\\` and `\n` only) and `# TYPE <name> <type>` (counter,
 *   gauge, histogram, summary, untyped), at most one of each per metric, before its samples;
 *   any other `#` line is a comment;
 * - samples `name{label="value",...} value [timestamp]`: names `[a-zA-Z_:][a-zA-Z0-9_:]*`, label
 *   names `[a-zA-Z_][a-zA-Z0-9_]*` (not `__`-prefixed, each once), values in double quotes with the
 *   escapes `\\`, `\"` and `\n` only, a float (NaN and Inf as Go's ParseFloat reads them) and
 *   an optional integer timestamp, nothing after;
 * - a metric's lines form one group; no series appears twice;
 * - counters are never negative; a gauge or counter has only samples of its own name; a histogram
 *   only `_bucket` (with `le`), `_sum` and `_count`, and per label set its buckets are in
 *   increasing `le` order ending with `+Inf`, cumulative, the `+Inf` bucket equal to `_count`, with
 *   a `_sum`; a summary only samples with `quantile` (0 to 1), `_sum` and `_count`.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestamp?: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help?: string;
  samples: Sample[];
}

export class ExpositionError extends Error {
  override name = 'ExpositionError';
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Every metric family of `text`, in order; throws ExpositionError at the first malformed line. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  if (text === '') return families;
  if (!text.endsWith('\n')) throw new ExpositionError('the last line does not end with a line feed');
  const lines = text.slice(0, -1).split('\n');
  /** Families whose group of lines is over (another family's line came after). */
  const closed = new Set<string>();
  let current: string | undefined;
  const seenSeries = new Set<string>();
  /** TYPE or HELP lines given, per name, and whether its samples began. */
  const typed = new Set<string>();
  const helped = new Set<string>();
  const sampled = new Set<string>();

  const enter = (name: string, at: string) => {
    if (current === name) return;
    if (closed.has(name)) throw new ExpositionError(`${at}: the lines of metric ${name} are not one group`);
    if (current !== undefined) closed.add(current);
    current = name;
  };
  const familyOf = (name: string): Family => {
    let family = families.get(name);
    if (!family) {
      family = { name, type: 'untyped', samples: [] };
      families.set(name, family);
    }
    return family;
  };

  lines.forEach((line, index) => {
    const at = `line ${index + 1} (${JSON.stringify(line.length > 120 ? `${line.slice(0, 120)}…` : line)})`;
    if (line.includes('\r')) throw new ExpositionError(`${at}: carriage return`);
    if (/^[ \t]*$/.test(line)) return;
    if (line.startsWith('#')) {
      const match = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
      if (!match) {
        if (/^#[ \t]+(HELP|TYPE)(?:[ \t]|$)/.test(line)) throw new ExpositionError(`${at}: ${line.split(/[ \t]+/)[1]} line without a metric name`);
        return; // a comment
      }
      const [, keyword, name, rest = ''] = match as unknown as [string, 'HELP' | 'TYPE', string, string | undefined];
      if (!METRIC_NAME.test(name)) throw new ExpositionError(`${at}: invalid metric name ${JSON.stringify(name)}`);
      enter(name, at);
      const family = familyOf(name);
      if (keyword === 'HELP') {
        if (helped.has(name)) throw new ExpositionError(`${at}: second HELP line for ${name}`);
        helped.add(name);
        family.help = unescapeHelp(rest, at);
      } else {
        if (typed.has(name)) throw new ExpositionError(`${at}: second TYPE line for ${name}`);
        if (sampled.has(name)) throw new ExpositionError(`${at}: TYPE line for ${name} after its samples`);
        const type = rest.trim() as MetricType;
        if (!TYPES.has(type)) throw new ExpositionError(`${at}: unknown type ${JSON.stringify(rest)}`);
        typed.add(name);
        family.type = type;
      }
      return;
    }
    const sample = parseSample(line, at);
    const owner = ownerOf(sample.name, families, typed);
    enter(owner, at);
    sampled.add(owner);
    const family = familyOf(owner);
    const series = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
    if (seenSeries.has(series)) throw new ExpositionError(`${at}: series ${sample.name} with the same labels seen before`);
    seenSeries.add(series);
    checkSampleName(family, sample, at);
    family.samples.push(sample);
  });

  for (const family of families.values()) {
    if (family.type === 'histogram') checkHistogram(family);
    if (family.type === 'summary') checkSummary(family);
  }
  return families;
}

/** The family a sample belongs to: a histogram or summary's `_bucket`, `_sum`, `_count`, else its own. */
function ownerOf(name: string, families: Map<string, Family>, typed: Set<string>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const family = families.get(base);
    if (family && typed.has(base) && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return name;
}

function checkSampleName(family: Family, sample: Sample, at: string): void {
  const { name, type } = family;
  if (type === 'histogram') {
    if (![`${name}_bucket`, `${name}_sum`, `${name}_count`].includes(sample.name)) throw new ExpositionError(`${at}: histogram ${name} has a sample named ${sample.name}`);
    if (sample.name === `${name}_bucket` && sample.labels.le === undefined) throw new ExpositionError(`${at}: bucket without le`);
    if (sample.name !== `${name}_bucket` && sample.labels.le !== undefined) throw new ExpositionError(`${at}: le on ${sample.name}`);
  } else if (type === 'summary') {
    if (sample.name === name && sample.labels.quantile === undefined) throw new ExpositionError(`${at}: summary sample without quantile`);
    if (sample.name !== name && sample.labels.quantile !== undefined) throw new ExpositionError(`${at}: quantile on ${sample.name}`);
  } else if (sample.name !== name) {
    throw new ExpositionError(`${at}: ${type} ${name} has a sample named ${sample.name}`);
  }
  const isCount = type === 'counter' || ((type === 'histogram' || type === 'summary') && (sample.name === `${name}_count` || sample.name === `${name}_bucket`));
  if (isCount && !(sample.value >= 0)) throw new ExpositionError(`${at}: a count below zero or NaN`);
}

/** Labels without `except`, as a key. */
function groupKey(labels: Record<string, string>, except: string): string {
  return JSON.stringify(Object.entries(labels).filter(([k]) => k !== except).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: Sample[]; sum?: Sample; count?: Sample }>();
  const group = (key: string) => {
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { buckets: [] }));
    return g;
  };
  for (const sample of family.samples) {
    const g = group(groupKey(sample.labels, 'le'));
    if (sample.name.endsWith('_bucket')) g.buckets.push(sample);
    else if (sample.name.endsWith('_sum')) g.sum = sample;
    else g.count = sample;
  }
  for (const [key, g] of groups) {
    const where = `histogram ${family.name}${key}`;
    if (g.buckets.length === 0) throw new ExpositionError(`${where}: no buckets`);
    let previousLe = Number.NEGATIVE_INFINITY;
    let previousCount = 0;
    for (const bucket of g.buckets) {
      const le = parseFloatValue(bucket.labels.le!);
      if (le === undefined || Number.isNaN(le)) throw new ExpositionError(`${where}: le ${JSON.stringify(bucket.labels.le)} is not a number`);
      if (!(le > previousLe)) throw new ExpositionError(`${where}: buckets not in increasing le order`);
      if (bucket.value < previousCount) throw new ExpositionError(`${where}: bucket counts not cumulative`);
      previousLe = le;
      previousCount = bucket.value;
    }
    const last = g.buckets[g.buckets.length - 1]!;
    if (last.labels.le !== '+Inf') throw new ExpositionError(`${where}: the last bucket is not le="+Inf"`);
    if (!g.count) throw new ExpositionError(`${where}: no _count`);
    if (!g.sum) throw new ExpositionError(`${where}: no _sum`);
    if (g.count.value !== last.value) throw new ExpositionError(`${where}: _count ${g.count.value} differs from the +Inf bucket ${last.value}`);
  }
}

function checkSummary(family: Family): void {
  for (const sample of family.samples) {
    if (sample.labels.quantile === undefined) continue;
    const q = parseFloatValue(sample.labels.quantile);
    if (q === undefined || !(q >= 0 && q <= 1)) throw new ExpositionError(`summary ${family.name}: quantile ${JSON.stringify(sample.labels.quantile)} outside 0..1`);
  }
}

/**
 * A float as Prometheus reads one (Go's strconv.ParseFloat): decimal notation, or NaN, Inf and
 * Infinity in any case, the infinities signed or not (prom-client writes `Nan`). Hexadecimal
 * floats, which ParseFloat also takes, are refused: no exporter of ours writes them.
 */
function parseFloatValue(text: string): number | undefined {
  if (/^nan$/i.test(text)) return Number.NaN;
  const inf = /^([+-]?)inf(inity)?$/i.exec(text);
  if (inf) return inf[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return FLOAT.test(text) ? Number(text) : undefined;
}

function unescapeHelp(text: string, at: string): string {
  return text.replace(/\\(.?)/g, (_, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    throw new ExpositionError(`${at}: invalid escape \\${c} in HELP`);
  });
}

/** One sample line, read a character at a time. */
function parseSample(line: string, at: string): Sample {
  let i = 0;
  const fail = (what: string): never => {
    throw new ExpositionError(`${at}: ${what} at column ${i + 1}`);
  };
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) fail('expected a metric name');
  const name = nameMatch![0];
  i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      if (line[i] === '}') {
        i++;
        break;
      }
      const labelMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
      if (!labelMatch) fail('expected a label name or "}"');
      const label = labelMatch![0];
      if (label.startsWith('__')) fail(`reserved label name ${label}`);
      if (label in labels) fail(`label ${label} given twice`);
      i += label.length;
      if (line[i] !== '=') fail('expected "=" after the label name');
      i++;
      if (line[i] !== '"') fail('expected a double-quoted label value');
      i++;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) fail('unterminated label value');
        if (c === '"') {
          i++;
          break;
        }
        if (c === '\\') {
          const next = line[i + 1];
          if (next === '\\') value += '\\';
          else if (next === '"') value += '"';
          else if (next === 'n') value += '\n';
          else fail(`invalid escape \\${next ?? ''} in a label value`);
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      labels[label] = value;
      if (line[i] === ',') {
        i++;
        continue;
      }
      if (line[i] !== '}') fail('expected "," or "}" after a label value');
    }
  }
  if (line[i] !== ' ' && line[i] !== '\t') fail('expected blanks before the value');
  const rest = line.slice(i).trim().split(/[ \t]+/);
  if (rest.length > 2 || rest[0] === '') fail('expected a value and at most a timestamp');
  const value = parseFloatValue(rest[0]!);
  if (value === undefined) fail(`invalid value ${JSON.stringify(rest[0])}`);
  const sample: Sample = { name, labels, value: value! };
  if (rest[1] !== undefined) {
    if (!/^-?\d+$/.test(rest[1])) fail(`invalid timestamp ${JSON.stringify(rest[1])}`);
    sample.timestamp = Number(rest[1]);
  }
  if (!METRIC_NAME.test(name)) fail('invalid metric name');
  for (const label of Object.keys(labels)) if (!LABEL_NAME.test(label)) fail('invalid label name');
  return sample;
}

/** The value of the sample named `name` whose labels are exactly `labels`; 0 when there is none. */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const want = groupKey(labels, '');
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name === name && groupKey(sample.labels, '') === want) return sample.value;
    }
  }
  return 0;
}

/** Every sample named `name`, whatever its labels. */
export function samplesOf(families: Map<string, Family>, name: string): Sample[] {
  return [...families.values()].flatMap((family) => family.samples.filter((s) => s.name === name));
}
