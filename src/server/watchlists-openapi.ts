/**
 * The watchlists' endpoints (src/server/watchlists.ts, issue 36) as the OpenAPI document tells
 * them: the body of `POST {prefix}watchlists` is the schema the service validates it with
 * (src/automation/watchlist.ts `watchlistInputSchema`); the answers are valibot schemas here, of
 * the JSON src/view/types.d.ts types (checked to agree when compiling), strict like the API's.
 * No Hono: `oas openapi` loads this without the server.
 */
import * as v from 'valibot';
import { watchlistInputSchema } from '../automation/watchlist.js';
import { PAP_LEVELS, TLP_LEVELS } from '../marking/levels.js';
import type { WatchlistChangeView, WatchlistRunView, WatchlistView } from '../view/types.js';
import { errorResponse as error, type OpenApiContribution } from './openapi-entry.js';

/** `POST {prefix}watchlists`: the service's own schema, described. */
export const watchlistInputDocSchema = v.pipe(
  watchlistInputSchema,
  v.title('WatchlistInput'),
  v.description('`name` (1 to 64 letters, digits and _ . -), `text` holding the observables, `every` (an interval such as 30m, 6h, 1d, 1h30m: units s, m, h, d, w; at least 5m, at most 90d), and optionally `engines` (ids, aliases, `@sets`; default the default engines), `tlp` and `pap` (default: settings default_tlp, default_pap). No other field.'),
);

export const watchlistChangeSchema = v.pipe(
  v.strictObject({
    observable: v.string(),
    type: v.pipe(v.string(), v.description('Its type (FQDN, IPv4, URL...).')),
    kind: v.pipe(v.picklist(['verdict', 'reason', 'data']), v.description('`verdict`: its verdict changed; `reason`: a reason it did not have; `data`: an engine that had nothing now has something.')),
    engine: v.optional(v.pipe(v.string(), v.description('The engine (its result key) of a `reason` or `data` change.'))),
    before: v.pipe(v.nullable(v.string()), v.description('The verdict, the engine\'s reason or `no data` before; null when there was none.')),
    after: v.pipe(v.string(), v.description('The verdict, the new reason or the engine\'s summary now.')),
  }),
  v.title('WatchlistChange'),
);

export const watchlistRunSchema = v.pipe(
  v.strictObject({
    id: v.pipe(v.string(), v.description('The run\'s own id.')),
    analysis_id: v.pipe(v.nullable(v.string()), v.description('Its analysis (an ordinary one: results, history); null until accepted, or when it could not start.')),
    at: v.pipe(v.string(), v.description('When it started (ISO 8601).')),
    trigger: v.pipe(v.picklist(['added', 'schedule', 'manual']), v.description('`added`: the baseline run when the watchlist was added; `schedule`: its interval; `manual`: run now.')),
    scheduled_for: v.optional(v.pipe(v.string(), v.description('For a scheduled run: the interval\'s time it runs for (ISO 8601).'))),
    status: v.picklist(['running', 'done', 'failed']),
    baseline: v.pipe(v.boolean(), v.description('The first run that completed, compared with nothing: it fires nothing.')),
    changes: v.pipe(v.array(watchlistChangeSchema), v.description('What changed since the run before (empty for the baseline and while running).')),
    more_changes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Changes left out past the 200 kept.'))),
    error: v.optional(v.pipe(v.string(), v.description('Why it failed (one line).'))),
  }),
  v.title('WatchlistRun'),
);

export const watchlistSchema = v.pipe(
  v.strictObject({
    name: v.string(),
    text: v.pipe(v.string(), v.description('The observables, as text (one per line when they came from a file).')),
    engines: v.pipe(v.array(v.string()), v.description('Engine ids, aliases or `@sets`, as given; resolved at each run.')),
    every: v.pipe(v.string(), v.description('The interval, as given.')),
    tlp: v.picklist(TLP_LEVELS),
    pap: v.picklist(PAP_LEVELS),
    owner: v.pipe(v.string(), v.description('Who added it: its runs are started by this user.')),
    created: v.pipe(v.string(), v.description('When it was added (ISO 8601).')),
    last_run: v.pipe(v.nullable(v.string()), v.description('When its latest run started (ISO 8601); null before the first.')),
    runs: v.pipe(v.array(watchlistRunSchema), v.description('Its runs, newest first (the latest 50).')),
  }),
  v.title('Watchlist'),
);

export const watchlistsSchema = v.pipe(v.array(watchlistSchema), v.title('Watchlists'));

export const watchlistRemovedSchema = v.pipe(v.strictObject({ removed: v.pipe(v.string(), v.description('The name of the watchlist removed.')) }), v.title('WatchlistRemoved'));

export const watchlistRunStartedSchema = v.pipe(
  v.strictObject({
    watchlist: v.string(),
    run_id: v.string(),
    analysis_id: v.pipe(v.string(), v.description('The run\'s analysis: poll is_analysis_complete, read results.')),
    link: v.pipe(v.string(), v.regex(/^\/results\/[0-9a-f-]+$/), v.description('Its results page.')),
  }),
  v.title('WatchlistRunStarted'),
);

// The answers' schemas say what the page's and the API's types say.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agreed = <T extends true>(value: T): T => value;
agreed<Same<v.InferOutput<typeof watchlistChangeSchema>, WatchlistChangeView>>(true);
agreed<Same<v.InferOutput<typeof watchlistRunSchema>, WatchlistRunView>>(true);
agreed<Same<v.InferOutput<typeof watchlistSchema>, WatchlistView>>(true);

const NAME = { name: { description: 'The watchlist\'s name.', example: 'phishing-domains' } };
const RUN_ID = '6f1c2a9e-8b7d-4e52-9c3a-1d2e3f4a5b6c';
const ANALYSIS_ID = '0b9b8f5e-3c1e-4c5e-9a57-2f6f3e1d2c4b';

const WATCHLIST_EXAMPLE = {
  name: 'phishing-domains',
  text: 'login-verify-bank.com\n8.8.8.8',
  engines: ['provider_17', 'rdap_whois'],
  every: '6h',
  tlp: 'AMBER',
  pap: 'GREEN',
  owner: 'alice',
  created: '2026-11-02T08:00:00.000Z',
  last_run: '2026-11-02T14:00:00.000Z',
  runs: [
    {
      id: RUN_ID, analysis_id: ANALYSIS_ID, at: '2026-11-02T14:00:00.000Z', trigger: 'schedule', scheduled_for: '2026-11-02T14:00:00.000Z', status: 'done', baseline: false,
      changes: [{ observable: 'login-verify-bank.com', type: 'FQDN', kind: 'verdict', before: 'unknown', after: 'malicious' }],
    },
    { id: '2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d', analysis_id: '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f', at: '2026-11-02T08:00:00.000Z', trigger: 'added', status: 'done', baseline: true, changes: [] },
  ],
};

export const WATCHLISTS_OPENAPI: OpenApiContribution = {
  tags: [{ name: 'watchlists', description: 'Observables analysed again on a schedule, each run compared with the one before (changes fire watchlist.changed).' }],
  schemas: {
    WatchlistInput: watchlistInputDocSchema,
    Watchlist: watchlistSchema,
    Watchlists: watchlistsSchema,
    WatchlistRun: watchlistRunSchema,
    WatchlistChange: watchlistChangeSchema,
    WatchlistRemoved: watchlistRemovedSchema,
    WatchlistRunStarted: watchlistRunStartedSchema,
  },
  entries: [
    {
      method: 'get',
      path: 'watchlists',
      operationId: 'listWatchlists',
      summary: 'Every watchlist, with its runs',
      tags: ['watchlists'],
      role: 'viewer',
      responses: { 200: { description: 'The watchlists, by name.', body: { schema: watchlistsSchema, example: [WATCHLIST_EXAMPLE] } } },
    },
    {
      method: 'post',
      path: 'watchlists',
      operationId: 'addWatchlist',
      summary: 'Add a watchlist',
      description: 'Its baseline run starts at once (it fires nothing); `oas serve` then runs it every interval. The caller is its owner.',
      tags: ['watchlists'],
      role: 'analyst',
      requestBody: { content: { 'application/json': { schema: watchlistInputDocSchema, example: { name: 'phishing-domains', text: 'login-verify-bank[.]com 8.8.8.8', engines: ['provider_17', 'rdap_whois'], every: '6h', tlp: 'AMBER' } } } },
      responses: {
        201: { description: 'Added; `Location` names it.', body: { schema: watchlistSchema, example: { ...WATCHLIST_EXAMPLE, runs: [WATCHLIST_EXAMPLE.runs[1]!] } }, headers: { Location: 'The watchlist\'s path: `{prefix}watchlists/<name>`.' } },
        400: error('Not JSON, a field missing, unknown or invalid (name, interval, engines, TLP/PAP).', '"every" must be at least 5m (a watchlist asks every engine again each time), not 4m'),
        409: error('A watchlist of that name exists already.', 'a watchlist named phishing-domains exists already'),
        413: error('The body is over max_body_bytes, or the text holds more observables than max_observables.', 'request body larger than 1048576 bytes'),
        415: error('The body is not `application/json`.', 'Content-Type must be application/json (a {"name", "text", "engines", "every", "tlp", "pap"} object)'),
      },
    },
    {
      method: 'get',
      path: 'watchlists/{name}',
      operationId: 'getWatchlist',
      summary: 'A watchlist and its runs, each with what changed',
      tags: ['watchlists'],
      role: 'viewer',
      params: NAME,
      responses: {
        200: { description: 'The watchlist.', body: { schema: watchlistSchema, example: WATCHLIST_EXAMPLE } },
        404: error('No watchlist has this name.', 'watchlist not found: nope (GET /api/watchlists lists them)'),
      },
    },
    {
      method: 'delete',
      path: 'watchlists/{name}',
      operationId: 'removeWatchlist',
      summary: 'Remove a watchlist',
      description: 'Its runs\' analyses stay in the history.',
      tags: ['watchlists'],
      role: 'analyst',
      params: NAME,
      responses: {
        200: { description: 'Removed.', body: { schema: watchlistRemovedSchema, example: { removed: 'phishing-domains' } } },
        404: error('No watchlist has this name.', 'watchlist not found: nope (GET /api/watchlists lists them)'),
      },
    },
    {
      method: 'post',
      path: 'watchlists/{name}/run',
      operationId: 'runWatchlist',
      summary: 'Run a watchlist now',
      description: 'An ordinary analysis, asking the engines again; once it completes it is compared with the run before.',
      tags: ['watchlists'],
      role: 'analyst',
      params: NAME,
      responses: {
        200: { description: 'The run started.', body: { schema: watchlistRunStartedSchema, example: { watchlist: 'phishing-domains', run_id: RUN_ID, analysis_id: ANALYSIS_ID, link: `/results/${ANALYSIS_ID}` } } },
        404: error('No watchlist has this name.', 'watchlist not found: nope (GET /api/watchlists lists them)'),
        409: error('The run could not start as the watchlist is (an engine no longer known, a marking no longer allowed...).', 'watchlist phishing-domains could not run: unknown engine: provider_99'),
      },
    },
  ],
};
