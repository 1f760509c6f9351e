/**
 * The JSON the web pages read besides the three API endpoints (catalog, live analysis view,
 * history). Types only, no imports: the browser code (web/) compiles against this same file.
 */

/** One line of a results card. `href` (http or https only) makes the value a link to the source. */
export interface DetailFieldView {
  label: string;
  value: string;
  href?: string;
}

/** TLP 2.0 and PAP levels as FIRST spells them, least restrictive first (src/marking/levels.ts). */
export type TlpLevel = 'CLEAR' | 'GREEN' | 'AMBER' | 'AMBER+STRICT' | 'RED';
export type PapLevel = 'CLEAR' | 'GREEN' | 'AMBER' | 'RED';

/** An engine as the form's picker shows it. */
export interface EngineView {
  id: string;
  service: string;
  label: string;
  description: string;
  /** Tags exactly as the spec spells them (`IP`, `free_no_key`, ...). */
  tags: string[];
  types: string[];
  /** The variant the engine is listed under: the server's, or `older` for the legacy extras. */
  /** `beyond`: the reference's newer engines, outside the spec's catalog. */
  /** `custom`: defined by the server's configuration (`custom_engines`); shown in a group of its own. */
  catalog: 'main' | 'older' | 'beyond' | 'custom';
  /** Tagged `default` in the catalog variant the server runs: preselected. */
  default: boolean;
  /** False when a required credential is missing: shown, not selectable. */
  configured: boolean;
  /** Labels of the credentials the engine needs ("API key"); empty for keyless engines. */
  credentials: string[];
  /** Where to set the missing credentials (setting paths and environment variables); never values. */
  configure_hint: string;
  /** Where it sends an observable: nowhere (`none`), a server the team runs (`internal`), a public service (`third_party`). */
  disclosure: 'none' | 'internal' | 'third_party';
  /** Whether its lookup can reach infrastructure the observable names (resolving a domain, reverse DNS). */
  touches_target: boolean;
  /** The most restrictive TLP and PAP of an analysis it is sent (`engines.<id>.max_tlp`, `max_pap`, else its defaults). */
  max_tlp: TlpLevel;
  max_pap: PapLevel;
}

export interface CatalogView {
  /** The API prefix, e.g. `/api/`. */
  api_prefix: string;
  /** The catalog variant the server runs (setting `catalog`). */
  catalog: 'main' | 'older';
  engines: EngineView[];
  /**
   * The configuration's engine sets (`engine_sets`), by name in the configuration's order: the ids
   * of the engines each selects. A chip of the picker selects one; the API accepts `@name`.
   */
  sets: EngineSetView[];
  /** The levels the form offers, least restrictive first. */
  tlp_levels: TlpLevel[];
  pap_levels: PapLevel[];
  /** The marking of an analysis that names none (settings `default_tlp`, `default_pap`): the form's choice at first. */
  default_tlp: TlpLevel;
  default_pap: PapLevel;
}

export interface EngineSetView {
  name: string;
  /** Engine ids (the set's aliases resolved), in the set's order. */
  engines: string[];
}

/** One risk verdict per observable (src/verdict/verdict.ts). */
export type VerdictName = 'malicious' | 'suspicious' | 'clean' | 'unknown';

/**
 * For the history: the verdicts of a finished analysis's observables, counted when it completed.
 * `worst` is the most severe of them.
 */
export interface VerdictCountsView {
  malicious: number;
  suspicious: number;
  clean: number;
  unknown: number;
  worst: VerdictName;
}

/** `withheld`: the engine was not sent the observable (its TLP/PAP); the summary says why (`withheld: <reason>`). */
export type CellStatus = 'ok' | 'empty' | 'error' | 'withheld' | 'not_applicable' | 'pending';

/** One engine's outcome for one observable. */
export interface CellView {
  /** The engine key (the name the analysis used). */
  engine: string;
  status: CellStatus;
  /** One line: the engine's summary, the error, "no data"... */
  summary: string;
  fields: DetailFieldView[];
  /**
   * What the engine's answer says about the observable (its `evidence()`), for an engine that ran
   * (`ok` or `empty`); null when it does not judge, failed, or is still running. A `suspicious` or
   * `malicious` level is a risk signal (VPN, Tor, proxy, detections, listed ASN...).
   */
  evidence?: EvidenceView | null;
}

/** One engine's evidence: its level and one-line reason (e.g. "Tor exit node"). */
export interface EvidenceView {
  level: 'malicious' | 'suspicious' | 'clean';
  reason: string;
}

export interface ObservableView {
  index: number;
  observable: string;
  type: string;
  /** Where it was found in the file(s) the analysis was made from (`Received header 2`); empty for a pasted text. Text from outside: shown as text. */
  found_in: string[];
  reversed_ip: string | null;
  done: boolean;
  /** The observable's verdict; null while it is still running. */
  verdict: VerdictName | null;
  /** One line per engine that contributed, `<engine key>: <reason>`, most severe first. */
  reasons: string[];
  /** One per column of `AnalysisView.engines`, same order. */
  cells: CellView[];
  /** The graph view's nodes and edges for this observable (src/view/graph-view.ts); absent while it runs. */
  graph?: ObservableGraphView;
  /**
   * The earlier analyses of the store that held it (issue 38), as this one began: how many, the
   * first and last (ISO 8601), the last one's verdict and id; null when none did, while it runs, or
   * for results of older versions.
   */
  seen: SeenView | null;
  /**
   * The analyst's mark that decided its verdict when it was analysed (issue 38): the verdict is the
   * mark's (false_positive: clean) and `reasons` holds the one line "marked ... by ... on ...: note";
   * null when none applied or while it runs.
   */
  mark: MarkView | null;
  /** When a mark decided: the verdict and reasons the engines (or the allowlist) gave; null otherwise. */
  computed_verdict: { verdict: VerdictName; reasons: string[] } | null;
  /**
   * Only in GET /ui/analyses/<id>: the mark on the observable now when its result does not carry it
   * (made since this analysis, which is not rewritten). Absent otherwise.
   */
  mark_now?: MarkView;
}

/** An analyst's verdict on an observable (issue 38: `oas mark`, POST {prefix}marks; src/runner/result.ts ObservableMark). */
export interface MarkView {
  verdict: MarkVerdictName;
  note: string;
  /** Who marked it: a user's name, `cli:<account>`. */
  by: string;
  /** When (ISO 8601). */
  at: string;
  /** When it stops applying (ISO 8601); null: never. */
  expires: string | null;
}

export type MarkVerdictName = 'malicious' | 'suspicious' | 'clean' | 'false_positive';

/**
 * An allowlist entry as GET {prefix}allowlist lists it (issue 38): the configuration's first
 * (`by` is `config`, no `at`, not removable at run time), then those added at run time.
 */
export interface AllowEntryView {
  /** Normalised: `8.8.8.8`, `10.20.0.0/16`, `*.corp.example`, a lower-case hash. */
  value: string;
  reason: string;
  by: string;
  /** When it was added (ISO 8601); absent for the configuration's entries. */
  at?: string;
  expires: string | null;
  /** False once past its expiry. */
  active: boolean;
}

/** The result's `seen` (src/runner/result.ts SeenBefore). */
export interface SeenView {
  count: number;
  first: string;
  last: string;
  last_verdict: string;
  last_analysis_id: string;
}

/**
 * GET /ui/observables/<value> (issue 38): the analyses that held an observable, newest first, each
 * with the observable's verdict there and the link to its results; `total` counts them all.
 */
export interface ObservableHistoryView {
  /** The value asked for, as written. */
  value: string;
  total: number;
  items: { analysis_id: string; created_at: string; verdict: string; link: string }[];
}

/** What the graph view draws: observables, the IPs they resolve to, ASNs and the engines that flag them. */
export type GraphNodeKind = 'observable' | 'ip' | 'asn' | 'engine';

export interface GraphNodeView {
  /** Stable across observables (`obs:<value>`, `ip:<address>`, `asn:<digits>`, `engine:<key>`): the page merges by id. */
  id: string;
  kind: GraphNodeKind;
  label: string;
  /** Observables: their verdict. */
  verdict?: VerdictName;
  /** Observables: their type (`IPv4`, `FQDN`...). */
  type?: string;
  /** Engines: the most severe thing they said here. */
  level?: 'malicious' | 'suspicious';
  /** ASNs: listed in a bad-ASN list (bad_asn). */
  listed?: boolean;
}

export interface GraphEdgeView {
  id: string;
  source: string;
  target: string;
  /** observable → its reversed IP; IP → ASN; engine → what it flags. */
  relation: 'resolves_to' | 'in_asn' | 'flags';
  /** `flags`: the evidence level. */
  level?: 'malicious' | 'suspicious';
  /** One line for the text alternative: the engines that named the ASN, the evidence's reason. */
  note: string;
}

export interface ObservableGraphView {
  nodes: GraphNodeView[];
  edges: GraphEdgeView[];
}

export interface AnalysisView {
  id: string;
  created_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  complete: boolean;
  ignore_cache: boolean;
  /** Who started it: a user's name, `api_token`, `anonymous`, `cli`; null in records of older versions. */
  started_by: string | null;
  /** Its TLP and PAP (what its engines were allowed to receive); null in records of older versions. */
  tlp: TlpLevel | null;
  pap: PapLevel | null;
  progress: { done: number; total: number };
  /** Columns: engine key as the analysis named it, and its label. */
  engines: { key: string; label: string }[];
  observables: ObservableView[];
  /** The API's result objects so far, in input order; null for an observable still running. */
  results: (Record<string, unknown> | null)[];
  /** What it was made from when files (issue 35): their formats and sizes, an e-mail's authentication; null for a pasted text. */
  source: SourceView | null;
}

/** An e-mail's `Authentication-Results` outcomes (`pass`, `fail`, `softfail`, `none`...); each absent when the header does not say. */
export interface EmailAuthView {
  spf?: string;
  dkim?: string;
  dmarc?: string;
  /** The receiving system that wrote the header. */
  authserv_id?: string;
}

/** The files an analysis was made from, as its record keeps them: never their names or content. */
export interface SourceView {
  /** Each file's format (`eml`, `pdf`...), extension (lower case, no dot; empty when none) and size in bytes. */
  files: { kind: string; ext: string; bytes: number }[];
  /** The first e-mail's SPF, DKIM and DMARC outcomes; null when none was read. */
  email_auth: EmailAuthView | null;
}

/**
 * `POST {prefix}extract`'s answer (src/files/preview.ts): a file's observables before anything is
 * sent, each with where it was found and, when it is the team's own, why (`internal`): the form's
 * preview leaves those unchecked. Every string but `kind` and `type` comes from the file.
 */
export interface FilePreviewView {
  file: { name: string; kind: string; bytes: number };
  observables: { value: string; type: string; found_in: string[]; internal?: string }[];
  email_auth?: EmailAuthView;
  notes: string[];
}

export interface HistoryItemView {
  id: string;
  created_at: string;
  complete: boolean;
  duration_ms: number | null;
  engines: string[];
  /** The engines' display labels, same order. */
  engine_labels: string[];
  observable_count: number;
  /** The first few observables. */
  observables: { value: string; type: string }[];
  /** Counted when the analysis completed; null while it runs and for records of older versions. */
  verdicts: VerdictCountsView | null;
  /** Who started it: a user's name, `api_token`, `anonymous`, `cli`; null in records of older versions. */
  started_by: string | null;
  /** Its TLP and PAP; null in records of older versions. */
  tlp: TlpLevel | null;
  pap: PapLevel | null;
}

/** GET /ui/me: who the page's user is (`anonymous`, an admin, on a server without authentication). */
export interface MeView {
  name: string;
  role: 'viewer' | 'analyst' | 'admin';
}

/** A platform an analysis can be sent to (issue 37): `misp`, `opencti`, `thehive`. */
export type PushTargetName = 'misp' | 'opencti' | 'thehive';

/**
 * GET /ui/push-targets: the platforms the server has configured as push targets (setting `push`,
 * or the MISP and OpenCTI engines'), by name only: never a URL, a key or where they are set. The
 * results page draws a "Send to ..." button for each; `can_push` says whether the signed-in user
 * may (analyst or admin: `POST {prefix}analyses/<id>/push` is theirs).
 */
export interface PushTargetsView {
  targets: { id: PushTargetName; label: string }[];
  can_push: boolean;
  /** The user's role, for the note a viewer reads beside the disabled buttons. */
  role: MeView['role'];
}

/** The answer of `POST {prefix}analyses/<id>/push` (src/push/request.ts `pushAnswerSchema`). */
export interface PushAnswerView {
  target: PushTargetName;
  kind: 'event' | 'alert' | 'case' | 'observables';
  /** The event's, alert's or case's id in the platform (empty for OpenCTI). */
  id: string;
  /** Its page in the platform: upstream text, a link only when it is http(s). */
  link?: string;
  created: boolean;
  added: number;
  existing: number;
  indicators?: number;
  selected: number;
  withheld: number;
  /** All of it in one line; it may quote the platform: text, never markup. */
  message: string;
}

export interface HistoryView {
  query: string;
  page: number;
  per_page: number;
  total: number;
  items: HistoryItemView[];
}

/**
 * A watchlist as `GET {prefix}watchlists` and the Watchlists page read it (issue 36; made by
 * src/automation/): observables analysed again on a schedule, each run compared with the one before.
 */
export interface WatchlistView {
  name: string;
  /** The observables, as text (one per line when they came from a file). */
  text: string;
  /** Engine ids, aliases or `@sets`, as given; resolved at each run. */
  engines: string[];
  /** The interval, as given (`6h`, `30m`, `1d`). */
  every: string;
  tlp: TlpLevel;
  pap: PapLevel;
  /** Who added it: its runs are started by (and shared fairly as the bulk work of) this user. */
  owner: string;
  /** When it was added (ISO 8601). */
  created: string;
  /** When its latest run started (ISO 8601), null before the first. */
  last_run: string | null;
  /** Its runs, newest first (the latest 50). */
  runs: WatchlistRunView[];
}

/** One run of a watchlist: an ordinary analysis (in the history, marked with the watchlist's name). */
export interface WatchlistRunView {
  /** The run's own id (a run is claimed before its analysis exists). */
  id: string;
  /** Its analysis; null until the analysis is accepted (or when it could not start). */
  analysis_id: string | null;
  /** When it started (ISO 8601). */
  at: string;
  /** `added`: the baseline run when the watchlist was added; `schedule`: its interval; `manual`: run now. */
  trigger: 'added' | 'schedule' | 'manual';
  /** For a scheduled run: the interval's time it runs for (ISO 8601). */
  scheduled_for?: string;
  /** `running` until its analysis completes and is compared; `failed` when it could not run. */
  status: 'running' | 'done' | 'failed';
  /** The first run that completed, compared with nothing: it fires nothing. */
  baseline: boolean;
  /** What changed since the run before (empty for the baseline and while running). */
  changes: WatchlistChangeView[];
  /** Changes left out past the 200 kept. */
  more_changes?: number;
  /** Why it failed (one line). */
  error?: string;
}

/** What changed for one observable between two runs. */
export interface WatchlistChangeView {
  observable: string;
  /** Its type (FQDN, IPv4, URL...). */
  type: string;
  /** `verdict`: its verdict changed; `reason`: a reason it did not have; `data`: an engine that had nothing now has something. */
  kind: 'verdict' | 'reason' | 'data';
  /** The engine (its result key) of a `reason` or `data` change. */
  engine?: string;
  /** The verdict, the engine's reason or `no data` before; null when there was none. */
  before: string | null;
  /** The verdict, the new reason or the engine's summary now. */
  after: string;
}

/**
 * The answer of `POST {prefix}doctor` (issue 40), as `oas doctor --json` prints it
 * (src/doctor/report.ts `DoctorReport`): the admin's check of the server's configuration.
 */
export interface DoctorReportView {
  ok: boolean;
  calls: number;
  engines: number;
  checks: { kind: 'data_dir' | 'redis' | 'proxy' | 'dns' | 'engine'; target: string; service?: string; ok: boolean; message: string }[];
  /** What `oas doctor` prints: the cost, one line per check, the count of failures. */
  lines: string[];
}
