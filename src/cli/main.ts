/**
 * `oas`: analyze observables from a terminal or a script, list engines, serve the HTTP API.
 * Exit codes: 0 the analysis ran, 1 every selected engine failed (or the server could not
 * start), 2 usage errors and bad input. Errors are one line on stderr, never a stack trace.
 */
import { Command, CommanderError, Option } from 'commander';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, oneLine } from './errors.js';
import { VERSION as version } from './version.js';

// Start-up cost: each command's module (and what it needs: the engines, SQLite, the HTTP client,
// Hono) is imported by its action only, so `--version`, `--help` and usage errors load commander
// and package.json alone, and `oas engines` never loads the server or the storage.

const configOption = () => new Option('-c, --config <file>', 'configuration file (JSON); default $OAS_CONFIG or ./oas.config.json');
const catalogOption = () => new Option('--catalog <variant>', 'engine catalog variant: main or older (setting catalog; default main)');
const dataDirOption = () => new Option('--data-dir <dir>', 'directory of the cache and stored analyses (setting data_dir)');
const redisOption = (what: string) => new Option('--redis <url>', `Redis shared by the team, e.g. redis://127.0.0.1:6379 (setting redis_url, environment OAS_REDIS_URL): ${what}`);

/** After the options of `oas analyze --help`. */
const ANALYZE_EXAMPLES = `Examples:
  $ oas analyze 8.8.8.8 example.com             # the default engines, a table
  $ oas analyze -e virustotal,urlscan 'hxxps://evil[.]example/login'
  $ pbpaste | oas analyze                       # text on stdin, defanged or not
  $ oas analyze --json < alert.txt > out.json   # the API's JSON, with verdicts
  $ oas analyze -f csv -o iocs.csv < alert.txt  # or xlsx, stix, misp
  $ oas analyze -q --no-color 1.1.1.1           # no progress, no colours`;

/** Repeatable options (`--file a --file b`): each value appended. */
const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * `analyzeHelp`: the engines per observable type, when `oas analyze --help` was asked for (loaded
 * before parsing, since commander writes help synchronously; see analyzeHelpText).
 */
function buildProgram(analyzeHelp?: string): Command {
  const program = new Command('oas')
    .description('Observable Analysis Service: look up domains, IPs, URLs, hashes and e-mail addresses in intelligence and network sources.')
    .version(version, '-V, --version')
    // One option for every command, before or after its name (`oas engines --no-color`); listed
    // in each command's help under "Global Options".
    .option('--no-color', 'no ANSI colours (same as setting NO_COLOR)')
    .configureHelp({ showGlobalOptions: true })
    .hook('preAction', (command) => {
      // NO_COLOR is what every renderer reads (src/cli/table.ts useColor).
      if (command.opts().color === false) process.env['NO_COLOR'] = '1';
    })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) });

  program
    .command('analyze')
    .description('analyze the observables found in TEXT (arguments, or standard input when none or "-")')
    .argument('[text...]', 'text holding observables, possibly defanged')
    .option('-e, --engines <list>', 'comma-separated engine ids or aliases (default: the default engines)')
    .option('-s, --set <names>', 'the engines of these engine sets (setting engine_sets; comma-separated; with --engines, both); oas engines --sets lists them')
    .option('--file <path>', 'analyze the observables of a file: an e-mail (.eml, .msg), a PDF, a CSV/TSV, JSON or any text; repeatable; "-" reads standard input as a file', collect, [])
    .option('--column <name>', 'with --file, for a CSV/TSV: only this column (repeatable); default every cell', collect, [])
    .option('--ignore-cache', 'query every engine again instead of using cached results')
    .option('--ignore-allowlist', 'analyse even the observables the allowlist covers (setting allowlist) instead of judging them clean unasked')
    .option('--tlp <level>', 'who may receive what the analysis holds: CLEAR, GREEN, AMBER, AMBER+STRICT or RED (default: setting default_tlp, AMBER); an engine gets the observables only up to its max_tlp')
    .option('--pap <level>', 'what may be done with it: CLEAR, GREEN, AMBER or RED (default: setting default_pap, GREEN); at AMBER or RED nothing reaches the observable\'s own infrastructure')
    .option('--json', 'same as --format json')
    .option('-f, --format <format>', 'output: table (default), json (the API\'s result array, with each observable\'s verdict and reasons), jsonl (one JSON line per observable as soon as it is done), csv, xlsx (needs --output), stix (a STIX 2.1 bundle) or misp (a MISP event)')
    .option('-o, --output <file>', 'write the output to FILE instead of standard output ("-": standard output)')
    .addOption(catalogOption())
    .addOption(configOption())
    .addOption(dataDirOption())
    .addOption(redisOption('the cache and quotas are shared with the team\'s servers and workers; the analysis still runs here'))
    .option('--server <url>', 'run the analysis on this oas (or Cyberbro) server through its API (environment OAS_SERVER)')
    .option('--prefix <path>', 'with --server: the API path prefix (default: the URL\'s path, else /api/)')
    .option('--token <token>', 'with --server: API token sent as Authorization: Bearer (environment OAS_API_TOKEN)')
    .option('--timeout <seconds>', 'with --server: time limit for the whole analysis (default 300)')
    .option('-q, --quiet', 'no progress on standard error (no spinner, no "waiting 57 s for virustotal quota" lines); errors are still told')
    .option('--push <target>', 'once done, push the analysis to misp, opencti or thehive (setting push; as oas push TARGET ID)')
    .addHelpText('after', () => `\n${analyzeHelp ? `${analyzeHelp}\n\n` : ''}${ANALYZE_EXAMPLES}`)
    .exitOverride()
    .action(async (text: string[], opts) => {
      const { analyzeCommand } = await import('./analyze.js');
      process.exitCode = await analyzeCommand(text, { ...opts, color: program.opts().color !== false && !process.env['NO_COLOR'] });
    });

  program
    .command('extract')
    .description('list the observables of FILE or TEXT, each with its type and where it was found, asking no engine (a preview of what an analysis would send)')
    .argument('[input...]', 'a file (.eml, .msg, .pdf, .csv, .tsv, .json, text) or text; standard input when none or "-"')
    .option('--column <name>', 'CSV/TSV: only this column (repeatable); default every cell', collect, [])
    .option('--json', 'print the observables as JSON (the same as POST /api/extract)')
    .addOption(configOption())
    .exitOverride()
    .action(async (input: string[], opts) => {
      const { extractCommand } = await import('./extract.js');
      process.exitCode = await extractCommand(input, opts);
    });

  program
    .command('enrich')
    .description('add what oas finds to a spreadsheet of indicators: the same rows and columns, plus oas_verdict, oas_reasons and one oas_<engine> column per engine')
    .argument('<file>', 'a .csv, .tsv or .xlsx file')
    .requiredOption('-o, --output <file>', 'where to write the enriched copy (.csv, .tsv or .xlsx)')
    .option('--column <name>', 'the column holding observables (repeatable); default every column that holds some', collect, [])
    .option('-e, --engines <list>', 'comma-separated engine ids or aliases (default: the default engines)')
    .option('-s, --set <names>', 'the engines of these engine sets (setting engine_sets; comma-separated; with --engines, both)')
    .option('--ignore-cache', 'query every engine again instead of using cached results')
    .option('--tlp <level>', 'as for oas analyze (default: setting default_tlp)')
    .option('--pap <level>', 'as for oas analyze (default: setting default_pap)')
    .addOption(catalogOption())
    .addOption(configOption())
    .addOption(dataDirOption())
    .option('-q, --quiet', 'no progress on standard error')
    .exitOverride()
    .action(async (file: string, opts) => {
      const { enrichCommand } = await import('./enrich.js');
      process.exitCode = await enrichCommand(file, opts);
    });

  program
    .command('engines')
    .description('list the engine catalog: id, service name, tags, types, credentials and whether they are configured')
    .option('--json', 'print the catalog as JSON')
    .option('--wide', 'every column (tags, every credential), however wide the terminal')
    .option('--sets', 'list the engine sets (setting engine_sets) instead: each name and its engines')
    .addOption(catalogOption())
    .addOption(configOption())
    .exitOverride()
    .action(async (opts) => {
      const { enginesCommand } = await import('./engines.js');
      process.exitCode = await enginesCommand(opts);
    });

  program
    .command('serve')
    .description('serve the HTTP API (POST {prefix}analyze, GET {prefix}is_analysis_complete/<id>, GET {prefix}results/<id>)')
    .option('--host <address>', 'address to bind (setting host; default 127.0.0.1)')
    .option('-p, --port <number>', 'port to listen on (setting port; default 8080)')
    .option('--prefix <path>', 'API path prefix (setting api_prefix; default /api/)')
    .option('--log-format <format>', 'request log lines on stderr: text or json (setting log_format; default text)')
    .addOption(catalogOption())
    .addOption(configOption())
    .addOption(dataDirOption())
    .addOption(redisOption('analyses, history, cache and quotas live there and engine calls are queue jobs, so any number of servers and workers share the work'))
    .option('--no-worker', 'with --redis: take no engine jobs in this process (leave them to `oas worker`)')
    .exitOverride()
    .action(async (opts) => {
      const { serveCommand } = await import('./serve.js');
      process.exitCode = await serveCommand(opts);
    });

  program
    .command('doctor')
    .description('check the configuration as oas serve would use it: the data folder, Redis, the proxy, the DNS servers and each usable engine with one call to its upstream; one line per check, exit 0 when all pass, 1 otherwise')
    .option('-e, --engines <list>', 'check only these engines (comma-separated ids, aliases or @sets; default: every usable one, keyless or with its credentials set)')
    .option('--json', 'print the report as JSON (what POST {prefix}doctor answers)')
    .addOption(catalogOption())
    .addOption(configOption())
    .addOption(dataDirOption())
    .addOption(redisOption('checked when set: it answers a PING'))
    .exitOverride()
    .action(async (opts) => {
      const { doctorCommand } = await import('./doctor.js');
      process.exitCode = await doctorCommand(opts);
    });

  program
    .command('mcp')
    .description('an MCP server on standard input and output, for AI assistants (Claude, Copilot, local models): tools analyze, get_results, list_engines, extract_observables')
    .addOption(configOption())
    .addOption(catalogOption())
    .addOption(dataDirOption())
    .addOption(redisOption('the cache and quotas are shared with the team\'s servers and workers; the analyses still run here'))
    .option('--server <url>', 'run the analyses on this oas (or Cyberbro) server through its API (environment OAS_SERVER)')
    .option('--prefix <path>', 'with --server: the API path prefix (default: the URL\'s path, else /api/)')
    .option('--token <token>', 'with --server: API token sent as Authorization: Bearer (environment OAS_API_TOKEN)')
    .option('--cyberbro-tools', 'also the five tools of mcp-cyberbro, same names and arguments (setting mcp_cyberbro_tools)')
    .exitOverride()
    .action(async (opts) => {
      const { mcpCommand } = await import('./mcp.js');
      process.exitCode = await mcpCommand(opts);
    });

  program
    .command('openapi')
    .description('print the OpenAPI 3.1 document of the HTTP API (the one GET {prefix}openapi.json serves), for CI pipelines and code generators')
    .option('--prefix <path>', 'the API path prefix it documents (default: setting api_prefix, /api/)')
    .addOption(configOption())
    .exitOverride()
    .action(async (opts) => {
      const { openapiCommand } = await import('./openapi.js');
      process.exitCode = await openapiCommand(opts);
    });

  const users = program
    .command('users')
    .description('the people and tools of a shared server: add, list, token, role, remove (users live in data_dir, or Redis with redis_url)');
  const usersAction = (action: string, withName: boolean) => async (...args: unknown[]) => {
    const name = withName ? args[0] as string : undefined;
    const opts = (withName ? args[1] : args[0]) as Record<string, unknown>;
    const { usersCommand } = await import('./users.js');
    process.exitCode = await usersCommand(action as 'add', name, opts);
  };
  const usersOptions = (command: Command) => command.addOption(configOption()).addOption(dataDirOption()).addOption(redisOption('the team\'s users live there')).exitOverride();
  usersOptions(users.command('add').description('add a user and print its new token once').argument('<name>').option('-r, --role <role>', 'viewer (reads results, history, exports), analyst (also starts analyses) or admin (also /metrics)')).action(usersAction('add', true));
  usersOptions(users.command('list').description('every user: name, role, created, last used (never a token)').option('--json', 'as JSON')).action(usersAction('list', false));
  usersOptions(users.command('token').description('give a user a new token (printed once); the old one stops working at once').argument('<name>')).action(usersAction('token', true));
  usersOptions(users.command('role').description('change a user\'s role (a user a trusted proxy named too); it applies at once').argument('<name>').option('-r, --role <role>', 'viewer, analyst or admin')).action(usersAction('role', true));
  usersOptions(users.command('remove').description('remove a user; its token stops working at once').argument('<name>')).action(usersAction('remove', true));
  users.exitOverride();

  // What the team already knows (issue 38): the allowlist and the analysts' marks.
  const knowledgeAction = (action: string) => async (...args: unknown[]) => {
    const { knowledgeCommand } = await import('./knowledge.js');
    const words = args.filter((arg): arg is string => typeof arg === 'string');
    const opts = args.find((arg) => typeof arg === 'object' && arg !== null && !Array.isArray(arg)) as Record<string, unknown>;
    const remove = action === 'mark' && opts.remove !== undefined;
    const value = remove ? String(opts.remove) : words[0];
    process.exitCode = await knowledgeCommand(remove ? 'unmark' : action as 'allow', { value, verdict: words[1] }, opts);
  };
  const knowledgeOptions = (command: Command) => command.addOption(configOption()).addOption(dataDirOption()).addOption(redisOption('the team\'s allowlist and marks live there')).exitOverride();
  const allow = program
    .command('allow')
    .description('the allowlist: observables, ranges (10.20.0.0/16), domains (*.corp.example) and hashes the team knows to be its own or harmless, sent to no engine and judged clean (add, list, remove)');
  knowledgeOptions(allow.command('add').description('add an entry (or replace its reason and expiry)').argument('<value>', 'an observable, a CIDR range, *.domain or a file hash')
    .option('--reason <text>', 'why it is harmless or the team\'s own (required)')
    .option('--expires <when>', 'when it stops applying: a duration (90s, 10m, 12h, 30d) or an ISO 8601 time')).action(knowledgeAction('allow'));
  knowledgeOptions(allow.command('list').description('every entry: the configuration\'s (by config) and those added since').option('--json', 'as JSON')).action(knowledgeAction('allowlist'));
  knowledgeOptions(allow.command('remove').description('remove an entry added at run time').argument('<value>')).action(knowledgeAction('unallow'));
  allow.exitOverride();
  knowledgeOptions(program
    .command('mark')
    .description('mark an observable malicious, suspicious, clean or false_positive, with a note: later analyses show the mark as its verdict, the engines\' beside it')
    .argument('[value]', 'the observable')
    .argument('[verdict]', 'malicious, suspicious, clean or false_positive')
    .option('--note <text>', 'what the team established (required)')
    .option('--expires <when>', 'when it stops applying: a duration (90s, 10m, 12h, 30d) or an ISO 8601 time')
    .option('--remove <value>', 'remove the mark on this observable instead')).action(knowledgeAction('mark'));
  knowledgeOptions(program.command('marks').description('every analyst\'s mark: value, verdict, note, who, when, expiry').option('--json', 'as JSON')).action(knowledgeAction('marks'));

  const watch = program
    .command('watch')
    .description('watchlists: observables analysed again on a schedule by oas serve, each run compared with the one before (add, list, show, run, remove)');
  const watchAction = (action: string, withName: boolean) => async (...args: unknown[]) => {
    const name = withName ? args[0] as string : undefined;
    const words = action === 'add' ? args[1] as string[] : [];
    const opts = args[action === 'add' ? 2 : withName ? 1 : 0] as Record<string, unknown>;
    const { watchCommand } = await import('./watch.js');
    process.exitCode = await watchCommand(action as 'add', name, words, opts);
  };
  const watchOptions = (command: Command) => command.addOption(configOption()).addOption(dataDirOption()).addOption(redisOption('the team\'s watchlists live there')).exitOverride();
  watchOptions(watch.command('add').description('add a watchlist and run its baseline now (oas serve then runs it every interval)').argument('<name>', 'letters, digits, _ . - (at most 64)').argument('[text...]', 'the observables to watch, possibly defanged')
    .option('--every <interval>', 'how often: 30m, 6h, 1d... (at least 5m)')
    .option('-e, --engines <list>', 'comma-separated engine ids or aliases (default: the default engines)')
    .option('-s, --set <names>', 'the engines of these engine sets (comma-separated; with --engines, both)')
    .option('--file <path>', 'watch the observables of a file (as oas analyze --file reads it); repeatable', collect, [])
    .option('--column <name>', 'with --file, for a CSV/TSV: only this column (repeatable)', collect, [])
    .option('--tlp <level>', 'its runs\' TLP (default: setting default_tlp)')
    .option('--pap <level>', 'its runs\' PAP (default: setting default_pap)')
    .option('--owner <name>', 'who its runs are started by (default cli)')
    .option('--json', 'print the watchlist as JSON once its baseline ran')).action(watchAction('add', true));
  watchOptions(watch.command('list').description('every watchlist: interval, last run and what it found, owner, marking, engines').option('--json', 'as JSON')).action(watchAction('list', false));
  watchOptions(watch.command('show').description('a watchlist and its runs, each with what changed').argument('<name>').option('--json', 'as JSON')).action(watchAction('show', true));
  watchOptions(watch.command('run').description('run a watchlist now, here, and print what changed since its last run').argument('<name>').option('--json', 'the run as JSON')).action(watchAction('run', true));
  watchOptions(watch.command('remove').description('remove a watchlist (its runs\' analyses stay in the history)').argument('<name>')).action(watchAction('remove', true));
  watch.exitOverride();

  program
    .command('worker')
    .description('take engine jobs from the team\'s Redis (redis_url) until SIGTERM; run as many as needed, on any machine')
    .option('--concurrency <n>', 'observables analysed at once (setting worker_concurrency; default 32)')
    .addOption(configOption())
    .addOption(redisOption('the queue to take jobs from (required)'))
    .exitOverride()
    .action(async (opts) => {
      const { workerCommand } = await import('./worker.js');
      process.exitCode = await workerCommand(opts);
    });

  program
    .command('push')
    .description('push an analysis into a platform of the team (setting push): a MISP event, OpenCTI observables and indicators, a TheHive alert; prints what was created')
    .argument('<target>', 'misp, opencti or thehive')
    .argument('<analysis_id>', 'the analysis (its id, as oas analyze and the API print it)')
    .option('--event <id>', 'MISP: add the attributes to this existing event')
    .option('--case <id>', 'TheHive: add the observables to this case instead of making an alert')
    .option('--min-verdict <verdict>', 'push observables at least this severe: malicious, suspicious (default), clean or unknown')
    .option('--all', 'push every observable, whatever its verdict')
    .option('--json', 'what was created, as JSON')
    .addOption(configOption())
    .addOption(dataDirOption())
    .addOption(redisOption('the team\'s analyses live there'))
    .exitOverride()
    .action(async (target: string, analysisId: string, opts) => {
      const { pushCommand } = await import('./push.js');
      process.exitCode = await pushCommand(target, analysisId, opts);
    });

  program
    .command('history')
    .description('the analyses that held an observable, newest first, with its verdict in each and the link to its results (issue 38: "seen before")')
    .argument('<value>', 'the observable (a domain, an IP, a URL, a hash, an e-mail address; defanged or not)')
    .option('--limit <n>', 'list at most this many analyses (default 50)')
    .option('--json', 'as JSON: value, total and items (analysis_id, created_at, verdict, link)')
    .addOption(configOption())
    .addOption(dataDirOption())
    .addOption(redisOption('the team\'s analyses live there'))
    .exitOverride()
    .action(async (value: string, opts) => {
      const { historyCommand } = await import('./history.js');
      process.exitCode = await historyCommand(value, opts);
    });

  program
    .command('backup')
    .description('write a consistent copy of the SQLite file of data_dir to PATH, also while oas serve runs (docs/upgrades.md)')
    .argument('<path>', 'the file to write (refused when it exists, unless --force)')
    .option('--force', 'replace PATH when it exists')
    .addOption(configOption())
    .addOption(dataDirOption())
    .exitOverride()
    .action(async (path: string, opts) => {
      const { backupCommand } = await import('./backup.js');
      process.exitCode = await backupCommand(path, opts);
    });

  program
    .command('restore')
    .description('put a backup back as the SQLite file of data_dir (refused while oas serve uses the folder); the file it replaces is kept beside it')
    .argument('<path>', 'a file written by oas backup')
    .addOption(configOption())
    .addOption(dataDirOption())
    .exitOverride()
    .action(async (path: string, opts) => {
      const { restoreCommand } = await import('./backup.js');
      process.exitCode = await restoreCommand(path, opts);
    });

  const webhooks = program
    .command('webhooks')
    .description('the webhooks of the setting webhooks: test one');
  webhooks
    .command('test')
    .description('send a signed ping event to a webhook (its name in the setting webhooks) or a URL, and print the receiver\'s status and answer; exit 0 on 2xx, 1 otherwise, 2 for an unknown name')
    .argument('<name|url>', 'a name of the setting webhooks, or an http(s) URL')
    .option('--secret-env <variable>', 'for a URL: the environment variable holding the whsec_... secret to sign with (default: setting callback_secret_env)')
    .addOption(configOption())
    .exitOverride()
    .action(async (target: string, opts) => {
      const { webhooksTestCommand } = await import('./webhooks.js');
      process.exitCode = await webhooksTestCommand(target, opts);
    });
  webhooks.exitOverride();

  program
    .command('completion')
    .description('print a script that completes oas\'s commands, options, engines, engine sets, formats and file names in bash, zsh or fish (docs/completion.md)')
    .argument('[shell]', 'bash, zsh or fish')
    // What a script asks at completion time (one word a line), for the configuration it names.
    .addOption(new Option('--list <what>', 'engines or sets').hideHelp())
    .addOption(configOption().hideHelp())
    .addOption(catalogOption().hideHelp())
    .exitOverride()
    .action(async (shell: string | undefined, opts) => {
      const { completionCommand } = await import('./completion.js');
      process.exitCode = await completionCommand(program, shell, opts);
    });

  return program;
}

/**
 * `oas analyze --help | head -3`: a reader of standard output that goes away is no error of
 * oas's (no EPIPE stack trace from commander's synchronous help). Commands that stream their
 * output add their own handling (quietOnClosedOutput); any other failure to write is one line.
 */
function quietOnClosedStdout(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED' || process.stdout.listenerCount('error') > 1) return;
    process.stderr.write(`oas: cannot write to standard output: ${error.code ?? error.message}\n`);
    process.exit(EXIT_FAILED);
  });
}

export async function main(argv: string[]): Promise<number> {
  quietOnClosedStdout();
  const program = buildProgram(await analyzeHelpText(argv.slice(2)));
  try {
    process.exitCode = undefined;
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT_OK;
      return EXIT_USAGE;
    }
    // A message may hold a value from a file, an argument or a server's answer: written inert
    // (src/text/inert.ts, loaded on this path only), its control characters as escapes.
    const { inert } = await import('../text/inert.js');
    const say = (message: string) => process.stderr.write(`oas: ${inert(message)}\n`);
    if (error instanceof Error && (error instanceof UsageError || await isInputOrConfigError(error))) {
      say(oneLine(error.message));
      return EXIT_USAGE;
    }
    if (error instanceof Error && error.name === 'RedisUnavailableError') {
      say(oneLine(error.message));
      return EXIT_FAILED;
    }
    say(`unexpected error: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    return EXIT_FAILED;
  }
}

/**
 * The engines per observable type for `oas analyze --help` (or `oas help analyze`), else
 * undefined. Start-up cost: the catalog is loaded only then (from the engines' cached
 * declarations when fresh), never for another command. Help never fails for it.
 */
async function analyzeHelpText(args: string[]): Promise<string | undefined> {
  const end = args.indexOf('--');
  const words = end === -1 ? args : args.slice(0, end);
  const first = words.findIndex((w) => !w.startsWith('-'));
  const asked = first !== -1 && (words[first] === 'help'
    ? words[first + 1] === 'analyze'
    : words[first] === 'analyze' && words.slice(first + 1).some((w) => w === '--help' || w === '-h'));
  if (!asked) return undefined;
  const valueOf = (long: string, short?: string) => {
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!;
      if (word.startsWith(`${long}=`)) return word.slice(long.length + 1);
      if (word === long || (short !== undefined && word === short)) return words[i + 1];
    }
    return undefined;
  };
  try {
    const { helpCatalog, enginesPerType } = await import('./help.js');
    const catalog = await helpCatalog(valueOf('--config', '-c'), valueOf('--catalog'));
    return enginesPerType(catalog, Number(process.env['COLUMNS']) || process.stdout.columns || 80);
  } catch {
    return undefined;
  }
}

/**
 * Bad input or configuration (exit 2). Their modules are imported here, on the error path only,
 * rather than at start-up.
 */
async function isInputOrConfigError(error: Error): Promise<boolean> {
  const [{ InputError }, { ConfigError }] = await Promise.all([import('../analysis/request.js'), import('../config/load.js')]);
  return error instanceof InputError || error instanceof ConfigError;
}

process.exitCode = await main(process.argv);
