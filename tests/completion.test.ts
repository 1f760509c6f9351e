/**
 * Issue 40, shell completion: `oas completion bash|zsh|fish` prints a script, and the script, run
 * by the shell, proposes the commands, subcommands, options, engine ids and aliases (after a comma
 * too), engine sets, formats and file names. The bash script is sourced by `bash --norc` with
 * COMP_WORDS and COMP_CWORD set, `_oas` called and COMPREPLY printed; `oas` is on the PATH (the
 * script asks it `oas completion --list` for what the configuration holds). zsh and fish run when
 * installed (skipped with the reason otherwise). What a configuration or an answer holds never
 * runs as shell code. docs/completion.md's commands run here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { OUTPUT_FORMATS } from '../src/cli/output.js';
import { runOas, runProcess } from './helpers/cli.js';
import { BIN } from './helpers/serve.js';
import { tempDir, tmpEnv } from './helpers/temp.js';

const dir = tempDir('oas-completion-');
/** A folder holding `oas` (this build) for the PATH, as an installed oas would be. */
const bin = join(dir, 'bin');
const PATH = `${bin}:${process.env.PATH ?? ''}`;
const scripts: Record<'bash' | 'zsh' | 'fish', string> = { bash: '', zsh: '', fish: '' };
/** A folder to complete in: files, a folder, an oas.config.json with a set and a custom engine. */
const work = join(dir, 'work');

const CONFIG = {
  engine_sets: { phishing: ['urlscan', 'rdap_whois'], triage: ['ipquery'] },
  custom_engines: { intel: { types: ['IPv4'], request: { url: 'https://intel.example/ip/{value}' }, fields: { score: '/score' } } },
};

before(async () => {
  mkdirSync(bin);
  writeFileSync(join(bin, 'oas'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
  chmodSync(join(bin, 'oas'), 0o755);
  mkdirSync(join(work, 'samples'), { recursive: true });
  for (const file of ['alert.eml', 'alerts.csv', 'notes.txt']) writeFileSync(join(work, file), '8.8.8.8\n');
  writeFileSync(join(work, 'oas.config.json'), JSON.stringify(CONFIG));
  for (const shell of ['bash', 'zsh', 'fish'] as const) {
    const run = await runOas(dir, ['completion', shell]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    scripts[shell] = join(dir, `oas.${shell}`);
    writeFileSync(scripts[shell], run.stdout);
  }
});

const env = (home = work) => ({ PATH, HOME: home, ...tmpEnv() });

/** What the bash script proposes for the command line `words` (the cursor in the last word), sorted. */
function bash(words: string[], options: { cwd?: string; script?: string; path?: string } = {}): string[] {
  const program = 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _oas; printf "%s\\n" "${COMPREPLY[@]}"';
  const run = spawnSync('bash', ['--norc', '--noprofile', '-c', program, 'bash', options.script ?? scripts.bash, ...words], {
    cwd: options.cwd ?? work,
    env: { ...env(), PATH: options.path ?? PATH },
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '', 'the script says nothing on stderr');
  return run.stdout.split('\n').filter(Boolean).sort();
}

/** The names `oas --help` (or `oas <command> --help`) lists under a heading, e.g. the commands or the long options. */
async function fromHelp(args: string[], heading: RegExp, name: RegExp): Promise<string[]> {
  const run = await runOas(dir, [...args, '--help']);
  const lines = run.stdout.split('\n');
  const start = lines.findIndex((line) => heading.test(line));
  assert.ok(start !== -1, `${heading} in the help of oas ${args.join(' ')}`);
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith(' ')) break;
    // The first column only (a description's continuation lines start further right).
    const term = /^ {2}(\S.*?)(?: {2}|$)/.exec(line)?.[1] ?? '';
    names.push(...[...term.matchAll(name)].map((m) => m[1]!));
  }
  return names;
}

const sorted = (words: readonly string[]) => [...words].sort();

describe('oas completion bash: what the script proposes', () => {
  test('the top-level commands, every one of oas --help, and by prefix', async () => {
    const commands = await fromHelp([], /^Commands:/, /^([a-z][a-z-]*)/g);
    assert.ok(commands.includes('analyze') && commands.includes('completion') && commands.includes('help'), commands.join(' '));
    assert.deepEqual(bash(['oas', '']), sorted(commands));
    assert.deepEqual(bash(['oas', 'w']), ['watch', 'webhooks', 'worker']);
    assert.deepEqual(bash(['oas', '--no-color', 'en']), ['engines', 'enrich'], 'after a global option');
  });

  test('subcommands, and help <command>', () => {
    assert.deepEqual(bash(['oas', 'users', '']), ['add', 'help', 'list', 'remove', 'role', 'token']);
    assert.deepEqual(bash(['oas', 'allow', '']), ['add', 'help', 'list', 'remove']);
    assert.deepEqual(bash(['oas', 'watch', 'r']), ['remove', 'run']);
    assert.deepEqual(bash(['oas', 'webhooks', '']), ['help', 'test']);
    assert.deepEqual(bash(['oas', 'help', 'an']), ['analyze']);
    assert.deepEqual(bash(['oas', 'users', 'help', 't']), ['token']);
  });

  test('the options of analyze: every one its --help lists, the global ones too', async () => {
    const options = await fromHelp(['analyze'], /^Options:/, /(?:^|[ ,])(--?[a-zA-Z][a-z-]*)/g);
    const global = await fromHelp(['analyze'], /^Global Options:/, /(?:^|[ ,])(--?[a-zA-Z][a-z-]*)/g);
    assert.ok(options.includes('--engines') && options.includes('-e') && global.includes('--no-color'), [...options, ...global].join(' '));
    assert.deepEqual(bash(['oas', 'analyze', '-']), sorted([...options, ...global]));
    assert.deepEqual(bash(['oas', 'analyze', '--e']), ['--engines']);
    assert.deepEqual(bash(['oas', 'analyze', '8.8.8.8', '--ignore-']), ['--ignore-allowlist', '--ignore-cache'], 'after an argument');
    assert.deepEqual(bash(['oas', 'users', 'add', '--r']), ['--redis', '--role'], 'a subcommand\'s');
  });

  test('engine ids and aliases after --engines, after a comma too, with the configuration\'s custom engines and sets', async () => {
    const catalog = JSON.parse((await runOas(work, ['engines', '--json'])).stdout) as { id: string; service: string }[];
    const names = sorted([...new Set(catalog.flatMap((e) => [e.id, e.service]))]);
    assert.ok(names.includes('intel') && names.includes('virustotal') && names.includes('provider_24'), 'ids, aliases and the custom engine');
    assert.deepEqual(bash(['oas', 'analyze', '--engines', '']), sorted([...names, '@phishing', '@triage']));
    assert.deepEqual(bash(['oas', 'analyze', '-e', 'virus']), ['virustotal']);
    const rev = names.filter((n) => n.startsWith('rev'));
    assert.ok(rev.includes('reverse_dns'));
    assert.deepEqual(bash(['oas', 'analyze', '--engines', 'rdap_whois,rev']), rev.map((n) => `rdap_whois,${n}`));
    assert.deepEqual(bash(['oas', 'analyze', '--engines', 'rdap_whois,ipquery,@']), ['rdap_whois,ipquery,@phishing', 'rdap_whois,ipquery,@triage']);
    // bash splits `--engines=x` at "=": readline completes what follows it.
    assert.deepEqual(bash(['oas', 'analyze', '--engines', '=', 'rdap_whois,rev']), rev.map((n) => `rdap_whois,${n}`));
    assert.deepEqual(bash(['oas', 'watch', 'add', 'mine', '-e', 'virus']), ['virustotal'], 'oas watch add');
  });

  test('set names after --set, from the configuration the command line names', () => {
    assert.deepEqual(bash(['oas', 'analyze', '--set', '']), ['phishing', 'triage']);
    assert.deepEqual(bash(['oas', 'enrich', 'alerts.csv', '-o', 'out.csv', '-s', 'phishing,t']), ['phishing,triage']);
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ engine_sets: { mail: ['urlscan'] } }));
    assert.deepEqual(bash(['oas', 'analyze', '--config', other, '--set', '']), ['mail']);
    assert.deepEqual(bash(['oas', 'analyze', `--config=${other}`, '--set', '']), ['mail']);
    // No configuration: no set, and the built-in engines.
    assert.deepEqual(bash(['oas', 'analyze', '--set', ''], { cwd: dir }), []);
    assert.ok(bash(['oas', 'analyze', '--engines', ''], { cwd: dir }).includes('virustotal'));
  });

  test('the formats after --format and -f, and the other fixed values', () => {
    assert.deepEqual(bash(['oas', 'analyze', '--format', '']), sorted(OUTPUT_FORMATS));
    assert.deepEqual(bash(['oas', 'analyze', '-f', 'j']), ['json', 'jsonl']);
    assert.deepEqual(bash(['oas', 'analyze', '--tlp', 'AMBER']), ['AMBER', 'AMBER+STRICT']);
    assert.deepEqual(bash(['oas', 'serve', '--log-format', '']), ['json', 'text']);
    assert.deepEqual(bash(['oas', 'push', '']), ['misp', 'opencti', 'thehive']);
    assert.deepEqual(bash(['oas', 'push', 'misp', '']), [], 'the analysis id: nothing to propose');
    assert.deepEqual(bash(['oas', 'mark', '8.8.8.8', 'f']), ['false_positive']);
    assert.deepEqual(bash(['oas', 'users', 'role', 'ann', '--role', 'a']), ['admin', 'analyst']);
    assert.deepEqual(bash(['oas', 'completion', '']), ['bash', 'fish', 'zsh']);
  });

  test('file names where a file is taken, folders for --data-dir, nothing for text', () => {
    assert.deepEqual(bash(['oas', 'analyze', '--file', 'al']), ['alert.eml', 'alerts.csv']);
    assert.deepEqual(bash(['oas', 'analyze', '-o', 'n']), ['notes.txt']);
    assert.deepEqual(bash(['oas', 'analyze', '--config', 'oas']), ['oas.config.json']);
    assert.deepEqual(bash(['oas', 'enrich', 'alerts']), ['alerts.csv']);
    assert.deepEqual(bash(['oas', 'extract', 'alert.eml', 'n']), ['notes.txt'], 'every argument of extract');
    assert.deepEqual(bash(['oas', 'analyze', '--data-dir', 's']), ['samples']);
    assert.deepEqual(bash(['oas', 'analyze', '--data-dir', 'no']), [], 'folders only');
    assert.deepEqual(bash(['oas', 'analyze', 'a']), [], 'the text to analyze is no file');
  });
});

describe('oas completion: values are data', () => {
  test('a hostile set name or engine id in the configuration runs nothing and is never proposed', () => {
    const home = tempDir('oas-completion-hostile-', dir);
    const pwned = join(home, 'pwned');
    const hostile = [`$(touch ${pwned})`, `\`touch ${pwned}\``, `x;touch ${pwned}`, `x' ; touch '${pwned}`, 'x\ny'];
    writeFileSync(join(home, 'oas.config.json'), JSON.stringify({
      engine_sets: Object.fromEntries(hostile.map((name) => [name, ['urlscan']])),
      custom_engines: Object.fromEntries(hostile.map((name) => [name, { types: ['IPv4'], request: { url: 'https://intel.example/{value}' } }])),
    }));
    for (const words of [['oas', 'analyze', '--set', ''], ['oas', 'analyze', '--engines', ''], ['oas', 'analyze', '--engines', 'x'], ['oas', 'analyze', '--set', '$(']]) {
      const proposed = bash(words, { cwd: home });
      assert.ok(proposed.every((word) => /^@?[A-Za-z0-9][A-Za-z0-9_.+-]*(,@?[A-Za-z0-9][A-Za-z0-9_.+-]*)*$/.test(word)), proposed.join(' '));
    }
    assert.equal(existsSync(pwned), false, 'nothing ran');
  });

  test('whatever `oas completion --list` answers, and whatever the command line holds, is never run', () => {
    const home = tempDir('oas-completion-answer-', dir);
    const pwned = join(home, 'pwned');
    const fake = join(home, 'bin');
    mkdirSync(fake);
    // An oas that answers hostile lines, and one plain name.
    writeFileSync(join(fake, 'oas'), `#!/bin/sh\nprintf '%s\\n' '$(touch ${pwned})' '\`touch ${pwned}\`' 'a;touch ${pwned}' '@x|touch ${pwned}' 'good_one'\n`);
    chmodSync(join(fake, 'oas'), 0o755);
    const path = `${fake}:${process.env.PATH ?? ''}`;
    assert.deepEqual(bash(['oas', 'analyze', '--engines', ''], { path }), ['good_one']);
    assert.deepEqual(bash(['oas', 'analyze', '--set', 'a,'], { path }), ['a,good_one']);
    assert.deepEqual(bash(['oas', 'analyze', '--config', `$(touch ${pwned})`, '--engines', `$(touch ${pwned})`], { path }), []);
    assert.deepEqual(bash(['oas', 'analyze', '--file', `$(touch ${pwned})`], { path }), []);
    assert.deepEqual(bash(['oas', 'analyze', `$(touch ${pwned})`, ''], { path }), []);
    assert.equal(existsSync(pwned), false, 'nothing ran');
  });

  test('oas completion --list prints the safe names only, for the configuration given', async () => {
    const engines = await runOas(work, ['completion', '--list', 'engines']);
    assert.equal(engines.code, 0, engines.stderr);
    const names = engines.stdout.split('\n').filter(Boolean);
    assert.ok(names.includes('intel') && names.includes('@phishing') && names.includes('virustotal'), names.join(' '));
    const sets = await runOas(dir, ['completion', '--list', 'sets', '--config', join(work, 'oas.config.json')]);
    assert.deepEqual([sets.code, sets.stdout], [0, 'phishing\ntriage\n']);
    const bad = await runOas(dir, ['completion', '--list', 'users']);
    assert.deepEqual([bad.code, bad.stdout, bad.stderr], [2, '', 'oas: --list takes engines or sets, not "users"\n']);
  });
});

describe('oas completion: usage', () => {
  test('an unknown shell is exit 2 with one line; so is no shell', async () => {
    const tcsh = await runOas(dir, ['completion', 'tcsh']);
    assert.deepEqual([tcsh.code, tcsh.stdout, tcsh.stderr], [2, '', 'oas: unknown shell "tcsh": oas completion writes a script for bash, zsh or fish\n']);
    const none = await runOas(dir, ['completion']);
    assert.deepEqual([none.code, none.stdout, none.stderr], [2, '', 'oas: oas completion needs a shell: bash, zsh or fish (e.g. oas completion bash)\n']);
  });

  test('the scripts are valid for their shell (bash -n; zsh -n and fish -n when installed)', () => {
    assert.equal(spawnSync('bash', ['-n', scripts.bash]).status, 0);
    for (const shell of ['zsh', 'fish'] as const) {
      if (!hasShell(shell)) continue;
      const run = spawnSync(shell, ['-n', scripts[shell]], { encoding: 'utf8' });
      assert.equal(run.status, 0, `${shell} -n: ${run.stderr}`);
    }
  });
});

function hasShell(shell: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
}

describe('oas completion zsh', { skip: hasShell('zsh') ? false : 'zsh is not installed (command -v zsh)' }, () => {
  /** What `_oas` hands compadd (or `FILES` for _files), with the completion system's builtins stubbed. */
  function zsh(words: string[]): string[] {
    const program = [
      'compdef() { : }',
      'compset() { return 1 }',
      '_files() { print -r -- FILES }',
      'compadd() { while [[ $1 == -* ]]; do if [[ $1 == -- ]]; then shift; break; fi; shift; done; print -rl -- "$@" }',
      'source "$1"; shift',
      'words=("$@"); CURRENT=$#',
      '_oas',
    ].join('\n');
    const run = spawnSync('zsh', ['-f', '-c', program, 'zsh', scripts.zsh, ...words], { cwd: work, env: env(), encoding: 'utf8' });
    assert.equal(run.stderr, '');
    // compadd proposes every word; zsh matches them against the prefix.
    const prefix = words.at(-1)!;
    return run.stdout.split('\n').filter((word) => word && (word === 'FILES' || word.startsWith(prefix))).sort();
  }

  test('commands, subcommands, options, engines, sets, formats, files', () => {
    assert.deepEqual(zsh(['oas', 'w']), ['watch', 'webhooks', 'worker']);
    assert.deepEqual(zsh(['oas', 'users', 'r']), ['remove', 'role']);
    assert.deepEqual(zsh(['oas', 'analyze', '--e']), ['--engines']);
    assert.deepEqual(zsh(['oas', 'analyze', '--engines', 'virus']), ['virustotal']);
    assert.deepEqual(zsh(['oas', 'analyze', '--set', '']), ['phishing', 'triage']);
    assert.deepEqual(zsh(['oas', 'analyze', '--format', 'j']), ['json', 'jsonl']);
    assert.deepEqual(zsh(['oas', 'analyze', '--file', 'a']), ['FILES']);
  });
});

describe('oas completion fish', { skip: hasShell('fish') ? false : 'fish is not installed (command -v fish)' }, () => {
  /** What fish proposes for the command line (complete -C), without the descriptions. */
  function fish(line: string): string[] {
    const run = spawnSync('fish', ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', scripts.fish, line], { cwd: work, env: env(), encoding: 'utf8' });
    assert.equal(run.stderr, '');
    return run.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]!).sort();
  }

  test('commands, subcommands, options, engines after a comma, sets, formats, files', () => {
    assert.deepEqual(fish('oas w'), ['watch', 'webhooks', 'worker']);
    assert.deepEqual(fish('oas users r'), ['remove', 'role']);
    assert.deepEqual(fish('oas analyze --e'), ['--engines']);
    assert.deepEqual(fish('oas analyze --engines rdap_whois,rev'), ['rdap_whois,reverse_dns']);
    assert.deepEqual(fish('oas analyze --set '), ['phishing', 'triage']);
    assert.deepEqual(fish('oas analyze --format j'), ['json', 'jsonl']);
    assert.deepEqual(fish('oas analyze --file al'), ['alert.eml', 'alerts.csv']);
  });
});

describe('docs/completion.md', () => {
  const doc = readFileSync(new URL('../../docs/completion.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]!);

  test('every command of its sh blocks runs (HOME a fresh folder) and installs what it says', async () => {
    const home = tempDir('oas-completion-home-', dir);
    writeFileSync(join(home, 'oas.config.json'), JSON.stringify(CONFIG));
    const lines = blocks.flatMap((block) => block.split('\n')).map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
    assert.ok(lines.filter((line) => /\boas completion\b/.test(line)).length >= 5, lines.join('\n'));
    for (const line of lines) {
      const run = await runProcess('bash', ['--norc', '--noprofile', '-e', '-c', line], { cwd: home, env: env(home) });
      assert.equal(run.code, 0, `${line}: ${run.stderr}`);
      assert.equal(run.stderr, '', line);
    }
    const bashFile = join(home, '.local/share/bash-completion/completions/oas');
    assert.match(readFileSync(bashFile, 'utf8'), /^# bash completion for oas/);
    assert.match(readFileSync(join(home, '.zfunc/_oas'), 'utf8'), /^#compdef oas\n/);
    assert.match(readFileSync(join(home, '.config/fish/completions/oas.fish'), 'utf8'), /^# fish completion for oas/);
    assert.match(readFileSync(join(home, '.bashrc'), 'utf8'), /^source ~\/\.oas-completion\.bash$/m);
    // The installed script completes, as a new shell would load it.
    assert.deepEqual(bash(['oas', 'analyze', '--set', ''], { script: bashFile, cwd: home }), ['phishing', 'triage']);
    // What the configuration holds, as the page shows.
    const sets = await runOas(home, ['completion', '--list', 'sets'], { env: { PATH } });
    assert.equal(sets.stdout, 'phishing\ntriage\n');
  });
});
