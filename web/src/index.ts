/**
 * `/`: paste text, pick engines, analyse. The picker is grouped (ready to use, needs a key, custom
 * engines of the server's configuration, older catalog, beyond the spec) and filtered by the spec's
 * tags and by name; the `default` engines are preselected (a custom engine never is); an engine
 * whose key is not configured is shown but cannot be selected. Above it, one chip per engine set of
 * the configuration (`@phishing`): pressing one selects exactly the set's engines that can run, in
 * place of the selection, and it shows as pressed while the selection is that set. Ctrl+Enter
 * submits. Submitting calls POST {prefix}analyze like any other client, then opens the results page.
 *
 * "Re-run with other engines" on a results page opens `/#text=...&engines=a,b`: the text and the
 * engines are prefilled from the address's fragment (never sent to the server), in place of the
 * defaults. Engines are matched by id or service name, `@name` by engine set; one the server cannot
 * run is reported.
 *
 * When the form cannot start an analysis (nothing pasted, no engine, the server's refusal: no
 * observable in the text, too large, too many analyses, no session), it says why in the sticky bar
 * next to Analyze (role="alert") and moves the focus to what needs fixing (web/src/form-problem.ts).
 * A 401 keeps the text and engines in this tab's session storage, and the form after signing in
 * starts from them.
 *
 * The analysis's TLP and PAP (issue 34) are two choices, the server's `default_tlp` and
 * `default_pap` at first (a re-run: the previous analysis's), sent as `tlp` and `pap`. Below them,
 * the selected engines that will not be sent the observables at that marking (their `max_tlp` or
 * `max_pap` is lower); their cells will say `withheld`.
 *
 * A viewer (GET /ui/me) reads results but starts no analysis: Analyze is disabled, with a note
 * saying why, and the form stays for reading the engine list.
 *
 * A file (issue 35) is chosen with the file input or dropped on the form (web/src/file-drop.ts):
 * its observables are listed first, each with a checkbox, and Analyze sends the file with the
 * checked values as multipart/form-data (`observables`); the text is then optional. Without a file
 * the form sends the JSON of the spec, as before.
 */
import { apiPath, getJson, postForm, postJson, signInHref } from './api.js';
import { announce, el, errorNotice, mainElement, replace } from './dom.js';
import { doctorPanel } from './doctor.js';
import { fileDrop } from './file-drop.js';
import { plural } from './format.js';
import { FILE_READING, NO_CHECKED, NO_ENGINE, NO_TEXT, problemOf, type FormProblem } from './form-problem.js';
import type { CatalogView, EngineSetView, EngineView, MeView, PapLevel, TlpLevel } from '../../src/view/types.js';

/** The filter chips: the spec's tags, in its order (`the service` is a name, not a filter). */
const TAG_FILTERS = ['default', 'IP', 'domain', 'URL', 'hash', 'email', 'risk', 'VPN', 'proxy', 'ports', 'free_no_key', 'scraping'];
const HIDDEN_TAGS = new Set(['the service']);

interface PickerState {
  tag: string | null;
  search: string;
}

/**
 * What to prefill: the address's fragment (`#text=...&engines=id,alias`, a re-run), else the
 * text and engines kept when the server asked to sign in (`draft`).
 */
interface Prefill {
  text: string | null;
  engines: string[] | null;
  /** The marking to start from (a re-run's, a draft's); null: the server's defaults. */
  tlp?: string | null;
  pap?: string | null;
  source: 'rerun' | 'draft';
}

/** Session storage key of the text and engines kept across signing in. */
const DRAFT_KEY = 'oas-draft';

function prefillFromHash(): Prefill {
  const params = new URLSearchParams(window.location.hash.slice(1));
  const engines = params.get('engines');
  if (params.get('text') === null && engines === null) return takeDraft() ?? { text: null, engines: null, source: 'rerun' };
  return {
    text: params.get('text'),
    engines: engines === null ? null : engines.split(',').map((e) => e.trim()).filter(Boolean),
    tlp: params.get('tlp'),
    pap: params.get('pap'),
    source: 'rerun',
  };
}

function keepDraft(text: string, engines: string[], marking: { tlp: string; pap: string }): void {
  try {
    window.sessionStorage.setItem(DRAFT_KEY, JSON.stringify({ text, engines, ...marking }));
  } catch {
    // storage refused (private mode, quota): the text stays in the page, only not across signing in
  }
}

/** The kept draft, once: it is removed as it is read. */
function takeDraft(): Prefill | null {
  try {
    const raw = window.sessionStorage.getItem(DRAFT_KEY);
    if (raw === null) return null;
    window.sessionStorage.removeItem(DRAFT_KEY);
    const draft = JSON.parse(raw) as { text?: unknown; engines?: unknown; tlp?: unknown; pap?: unknown };
    const engines = Array.isArray(draft.engines) ? draft.engines.filter((e): e is string => typeof e === 'string') : null;
    const word = (value: unknown) => (typeof value === 'string' ? value : null);
    return { text: typeof draft.text === 'string' ? draft.text : null, engines, tlp: word(draft.tlp), pap: word(draft.pap), source: 'draft' };
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const root = mainElement();
  let catalog: CatalogView;
  try {
    catalog = await getJson<CatalogView>('/ui/engines');
  } catch (error) {
    replace(root, errorNotice(`Could not load the engine list: ${error instanceof Error ? error.message : String(error)}`));
    return;
  }
  // Who this is: a viewer's form cannot start an analysis. Unknown (an older server): as before.
  const me = await getJson<MeView>('/ui/me').catch(() => null);
  root.appendChild(renderForm(catalog, prefillFromHash(), me));
  document.getElementById('text')?.focus();
}

function renderForm(catalog: CatalogView, prefill: Prefill, me: MeView | null = null): HTMLElement {
  const state: PickerState = { tag: null, search: '' };
  const text = el('textarea', {
    id: 'text',
    name: 'text',
    rows: 10,
    spellcheck: 'false',
    autocomplete: 'off',
    required: true,
    'aria-describedby': 'text-hint',
    placeholder: 'Paste anything: an alert, an e-mail, a list of domains, IP addresses, URLs, hashes, e-mail addresses or browser extension ids. Defanged forms like hxxps://example[.]com are understood.',
  });
  const ignoreCache = el('input', { type: 'checkbox', id: 'ignore-cache', name: 'ignore_cache' });
  const tlp = markingSelect('tlp', catalog.tlp_levels, catalog.default_tlp, prefill.tlp);
  const pap = markingSelect('pap', catalog.pap_levels, catalog.default_pap, prefill.pap);
  const markingNote = el('p', { id: 'marking-note', class: 'hint marking-note', 'aria-live': 'polite' });
  tlp.addEventListener('change', () => updateCount());
  pap.addEventListener('change', () => updateCount());
  const formError = el('p', { id: 'form-error', class: 'form-error', role: 'alert', hidden: true });
  const signIn = el('a', { href: signInHref(), id: 'form-signin', class: 'button', hidden: true }, 'Sign in');
  const submit = el('button', { type: 'submit', class: 'primary', id: 'submit' }, 'Analyze');
  const readOnly = me?.role === 'viewer';
  const roleNote = readOnly
    ? el('p', { class: 'hint role-note', id: 'role-note' }, `Your role (${me.role}) reads results; starting analyses needs analyst.`)
    : null;
  if (readOnly) {
    submit.disabled = true;
    submit.setAttribute('aria-describedby', 'role-note');
  }
  const count = el('span', { class: 'muted', id: 'selected-count' });

  if (prefill.text !== null) text.value = prefill.text;
  const checkboxes = new Map<string, HTMLInputElement>();
  const items = new Map<string, HTMLElement>();
  // Prefilled engines (a re-run) replace the defaults when at least one of them can run here.
  const byName = new Map<string, EngineView>();
  for (const engine of catalog.engines) for (const name of [engine.id, engine.service]) byName.set(name.toLowerCase(), engine);
  const byId = new Map(catalog.engines.map((engine) => [engine.id, engine]));
  const sets = new Map(catalog.sets.map((set) => [set.name.toLowerCase(), set]));
  // `@name` (an engine set, as the API accepts it) stands for the set's engines.
  const wanted = (prefill.engines ?? []).flatMap((name) => {
    const set = name.startsWith('@') ? sets.get(name.slice(1).toLowerCase()) : undefined;
    return set ? set.engines.map((id) => ({ name: id, engine: byId.get(id) })) : [{ name, engine: byName.get(name.toLowerCase()) }];
  });
  const rerun = new Set(wanted.flatMap((w) => (w.engine?.configured ? [w.engine.id] : [])));
  const unavailable = [...new Set(wanted.filter((w) => !w.engine?.configured).map((w) => w.name))];
  const preselected = (engine: EngineView) => engine.configured && (rerun.size > 0 ? rerun.has(engine.id) : isDefault(engine));
  for (const engine of catalog.engines) {
    const box = el('input', {
      type: 'checkbox',
      name: 'engines',
      value: engine.id,
      id: `engine-${engine.id}`,
      disabled: !engine.configured,
      'aria-describedby': `engine-${engine.id}-desc`,
    });
    box.checked = preselected(engine);
    box.addEventListener('change', () => updateCount());
    checkboxes.set(engine.id, box);
    items.set(engine.id, engineItem(engine, box));
  }

  const groups = [
    { title: 'Ready to use', note: 'no key needed, or its key is configured', match: (e: EngineView) => e.catalog === catalog.catalog && e.configured },
    { title: 'Needs a key', note: 'set the key in the configuration or the environment to enable these', match: (e: EngineView) => e.catalog === catalog.catalog && !e.configured },
    { title: 'Custom engines', note: 'defined by this server\'s custom_engines setting', match: (e: EngineView) => e.catalog === 'custom' },
    { title: 'Older catalog', note: 'legacy engines of the older catalog variant', match: (e: EngineView) => e.catalog !== catalog.catalog && e.catalog !== 'beyond' && e.catalog !== 'custom' },
    { title: 'Beyond the spec', note: 'newer engines of the reference, outside the spec\'s catalog', match: (e: EngineView) => e.catalog === 'beyond' },
  ];
  const groupElements = groups.map((group) => {
    const list = el('div', { class: 'engine-list' }, catalog.engines.filter(group.match).map((e) => items.get(e.id)!));
    const section = el('section', { class: 'engine-group', 'aria-label': group.title, hidden: list.children.length === 0 },
      el('h3', null, group.title, ' ', el('span', { class: 'muted' }, `(${group.note})`)),
      list);
    return { section, list };
  });
  const noMatch = el('p', { class: 'muted', hidden: true, id: 'no-engine-match' }, 'No engine matches this filter.');
  const prefillNote = prefill.source === 'draft'
    ? el('p', { class: 'notice prefill-note', id: 'prefill-note', role: 'status' }, 'What you typed before signing in is filled in: press Analyze to start.')
    : rerun.size > 0 || unavailable.length > 0
    ? el('p', { class: 'notice prefill-note', id: 'prefill-note', role: 'status' },
        rerun.size > 0 ? 'The observables and engines of the previous analysis are filled in: change the engines, then analyze.' : 'The observables of the previous analysis are filled in.',
        unavailable.length > 0 ? ` Not available here: ${unavailable.join(', ')}.` : null)
    : null;

  const chips = [null, ...TAG_FILTERS].map((tag) => {
    const chip = el('button', { type: 'button', class: 'chip', 'data-tag': tag ?? 'all', 'aria-pressed': tag === state.tag ? 'true' : 'false' }, tag ?? 'all');
    chip.addEventListener('click', () => {
      state.tag = tag;
      for (const other of chipElements) other.setAttribute('aria-pressed', String(other === chip));
      applyFilter();
    });
    return chip;
  });
  const chipElements = chips;

  // The engine sets: a chip selects a set's engines (those that can run here) in place of the selection.
  const setChips = catalog.sets.map((set) => setChip(set, byId, checkboxes));
  for (const { chip, members } of setChips) {
    chip.addEventListener('click', () => {
      for (const [id, box] of checkboxes) box.checked = !box.disabled && members.has(id);
      updateCount();
      announce(`Engine set @${chip.dataset.set}: ${plural(members.size, 'engine')} selected`);
    });
  }
  const search = el('input', { type: 'search', id: 'engine-search', placeholder: 'Filter engines by name', 'aria-label': 'Filter engines by name', autocomplete: 'off' });
  search.addEventListener('input', () => {
    state.search = search.value.trim().toLowerCase();
    applyFilter();
  });

  const shown = () => catalog.engines.filter((e) => !items.get(e.id)!.hidden);
  const selectShown = el('button', { type: 'button', class: 'link-button' }, 'Select shown');
  selectShown.addEventListener('click', () => {
    for (const engine of shown()) if (engine.configured) checkboxes.get(engine.id)!.checked = true;
    updateCount();
  });
  const clear = el('button', { type: 'button', class: 'link-button' }, 'Clear');
  clear.addEventListener('click', () => {
    for (const box of checkboxes.values()) box.checked = false;
    updateCount();
  });
  const defaults = el('button', { type: 'button', class: 'link-button' }, 'Defaults');
  defaults.addEventListener('click', () => {
    for (const engine of catalog.engines) checkboxes.get(engine.id)!.checked = engine.configured && isDefault(engine);
    updateCount();
  });

  function applyFilter(): void {
    let visible = 0;
    for (const engine of catalog.engines) {
      const byTag = state.tag === null || engine.tags.includes(state.tag);
      const haystack = `${engine.label} ${engine.id} ${engine.service} ${engine.description}`.toLowerCase();
      const hidden = !(byTag && (state.search === '' || haystack.includes(state.search)));
      items.get(engine.id)!.hidden = hidden;
      if (!hidden) visible += 1;
    }
    for (const group of groupElements) group.section.hidden = [...group.list.children].every((c) => (c as HTMLElement).hidden);
    noMatch.hidden = visible > 0;
  }

  function selected(): string[] {
    return catalog.engines.filter((e) => checkboxes.get(e.id)!.checked && !checkboxes.get(e.id)!.disabled).map((e) => e.id);
  }

  function updateCount(): void {
    const chosen = selected();
    count.textContent = `${plural(chosen.length, 'engine')} selected`;
    markingNote.textContent = withheldNote(catalog, chosen, tlp.value, pap.value);
    // A set's chip is pressed while the selection is exactly the set (its engines that can run).
    for (const { chip, members } of setChips) {
      chip.setAttribute('aria-pressed', String(members.size > 0 && chosen.length === members.size && chosen.every((id) => members.has(id))));
    }
  }

  // The file (issue 35): the form is its drop zone; its problems go to the bar next to Analyze.
  const drop = fileDrop({ problem: (problem) => showProblem(problem), clearProblem: () => clearProblem() }, { disabled: readOnly });
  const form = el('form', { id: 'analyze-form', class: 'analyze-form', novalidate: true },
    prefillNote,
    el('div', { class: 'field' },
      el('label', { for: 'text', class: 'field-label' }, 'Observables'),
      text,
      el('p', { id: 'text-hint', class: 'hint' }, el('kbd', null, 'Ctrl'), '+', el('kbd', null, 'Enter'), ' analyzes. Domains, IPv4/IPv6 addresses, URLs, MD5/SHA1/SHA256 hashes and e-mail addresses are picked out of the text.')),
    drop.element,
    el('fieldset', { class: 'marking-fields', 'aria-describedby': 'marking-hint' },
      el('legend', null, 'Marking'),
      el('div', { class: 'marking-choices' },
        el('label', { for: 'tlp', class: 'marking-choice' }, 'TLP ', tlp),
        el('label', { for: 'pap', class: 'marking-choice' }, 'PAP ', pap)),
      el('p', { id: 'marking-hint', class: 'hint' }, 'TLP: who may receive what the analysis holds. PAP: what may be done with it (from AMBER on, nothing reaches the observables\' own infrastructure). An engine is sent the observables only up to its own maximum; the others show as withheld.'),
      markingNote),
    el('fieldset', { class: 'engines' },
      el('legend', null, 'Engines ', count),
      setChips.length > 0
        ? el('div', { class: 'engine-sets', role: 'group', 'aria-labelledby': 'engine-sets-label' },
            el('span', { class: 'engine-sets-label', id: 'engine-sets-label' }, 'Engine sets'),
            setChips.map((s) => s.chip))
        : null,
      el('div', { class: 'engine-tools' },
        el('div', { class: 'chips', role: 'group', 'aria-label': 'Show engines tagged' }, chips),
        el('div', { class: 'engine-actions' }, search, selectShown, clear, defaults)),
      groupElements.map((g) => g.section),
      noMatch,
      // The admin's check of the engines and settings (issue 40): POST {prefix}doctor.
      me?.role === 'admin' ? doctorPanel() : null),
    // Sticky at the bottom of the window: Analyze, and why it could not start, stay in view below a long engine list.
    el('div', { class: 'form-footer', id: 'form-footer' },
      el('label', { class: 'check' }, ignoreCache, ' Ignore cache (ask every source again)'),
      el('div', { class: 'form-problem' }, formError, signIn),
      roleNote,
      submit));

  drop.dropOn(form);

  form.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (readOnly) return;
    clearProblem();
    const engines = selected();
    const file = drop.file();
    if (drop.reading()) return showProblem(FILE_READING);
    if (file === null && text.value.trim() === '') return showProblem(NO_TEXT);
    if (file !== null && text.value.trim() === '' && drop.checked().length === 0) return showProblem(NO_CHECKED);
    if (engines.length === 0) return showProblem(NO_ENGINE);
    submit.disabled = true;
    submit.textContent = 'Starting…';
    try {
      const marking = { tlp: tlp.value, pap: pap.value };
      const handle = file === null
        ? await postJson<{ analysis_id: string; link: string }>(apiPath('analyze'), { text: text.value, engines, ignore_cache: ignoreCache.checked, ...marking }, { signIn: false })
        : await postForm<{ analysis_id: string; link: string }>(apiPath('analyze'), analysisForm(file, drop.checked(), { text: text.value, engines, ignore_cache: ignoreCache.checked, ...marking }), { signIn: false });
      window.location.assign(handle.link);
    } catch (error) {
      submit.disabled = false;
      submit.textContent = 'Analyze';
      const problem = problemOf(error, file !== null);
      if (problem.fix === 'signin') keepDraft(text.value, engines, { tlp: tlp.value, pap: pap.value });
      showProblem(problem);
    }
  });
  text.addEventListener('input', () => text.removeAttribute('aria-invalid'));

  function clearProblem(): void {
    formError.hidden = true;
    formError.textContent = '';
    signIn.hidden = true;
    text.removeAttribute('aria-invalid');
  }

  /** The problem in the sticky bar next to Analyze (announced: role="alert"), the focus on what needs fixing. */
  function showProblem(problem: FormProblem): void {
    formError.textContent = problem.message;
    formError.hidden = false;
    signIn.hidden = problem.fix !== 'signin';
    if (problem.fix === 'text') text.setAttribute('aria-invalid', 'true');
    const target = problem.fix === 'text' ? text
      : problem.fix === 'engines' ? firstEngineShown() ?? search
      : problem.fix === 'file' ? drop.focusTarget()
      : problem.fix === 'signin' ? signIn
      : submit;
    target.focus({ preventScroll: true });
    // In the middle of the window: not under the sticky bar (the bar itself is always in view).
    if (!target.closest('.form-footer')) target.scrollIntoView({ block: 'center' });
  }

  /** The first engine that can be selected and that the filters show: where choosing one starts. */
  function firstEngineShown(): HTMLInputElement | undefined {
    return [...form.querySelectorAll<HTMLInputElement>('input[name="engines"]')].find((box) => !box.disabled && box.offsetParent !== null);
  }

  updateCount();
  return el('section', { class: 'panel' }, el('h1', null, 'Analyze observables'), form);
}

/**
 * The multipart body of an analysis of a file: the file, the checked values (`observables`, a JSON
 * array), the engines comma-separated, and the other fields as the JSON request has them.
 */
function analysisForm(file: File, checked: string[], fields: { text: string; engines: string[]; ignore_cache: boolean; tlp: string; pap: string }): FormData {
  const form = new FormData();
  form.append('file', file, file.name || 'file');
  form.append('observables', JSON.stringify(checked));
  form.append('engines', fields.engines.join(','));
  form.append('ignore_cache', String(fields.ignore_cache));
  form.append('tlp', fields.tlp);
  form.append('pap', fields.pap);
  if (fields.text.trim() !== '') form.append('text', fields.text);
  return form;
}

/**
 * A marking's choice: the levels, least restrictive first, shown as the standard writes them
 * (`TLP:AMBER+STRICT`); `wanted` (a re-run's, with or without its prefix, any case) when it is one,
 * else the server's default.
 */
function markingSelect<L extends TlpLevel | PapLevel>(name: 'tlp' | 'pap', levels: readonly L[], fallback: L, wanted: string | null | undefined): HTMLSelectElement {
  const prefix = `${name.toUpperCase()}:`;
  const select = el('select', { id: name, name }, levels.map((level) => el('option', { value: level }, `${prefix}${level}`)));
  const word = wanted?.trim().toUpperCase() ?? '';
  const asked = word.startsWith(prefix) ? word.slice(prefix.length) : word;
  select.value = levels.find((level) => level === asked) ?? fallback;
  return select;
}

/**
 * The selected engines that the marking keeps the observables from (their `max_tlp` or `max_pap`
 * is below it), in one line; empty when every one may be sent them.
 */
function withheldNote(catalog: CatalogView, chosen: readonly string[], tlp: string, pap: string): string {
  const above = (levels: readonly string[], level: string, ceiling: string) => levels.indexOf(level) > levels.indexOf(ceiling);
  const byId = new Map(catalog.engines.map((engine) => [engine.id, engine]));
  const kept = chosen.flatMap((id) => byId.get(id) ?? []).filter((e) => above(catalog.tlp_levels, tlp, e.max_tlp) || above(catalog.pap_levels, pap, e.max_pap));
  if (kept.length === 0) return '';
  return `Not sent at TLP:${tlp} and PAP:${pap}: ${kept.map((e) => `${e.label} (max TLP:${e.max_tlp}, PAP:${e.max_pap})`).join(', ')}.`;
}

/** Preselected by default: the server's `default` engines; never one of the configuration's own. */
function isDefault(engine: EngineView): boolean {
  return engine.default && engine.catalog !== 'custom';
}

/**
 * The chip of an engine set, and the engines it selects: those of the set that can run here. Its
 * title lists them, and those of the set that need a key; a set none of whose engines can run is
 * shown disabled.
 */
function setChip(set: EngineSetView, byId: ReadonlyMap<string, EngineView>, checkboxes: ReadonlyMap<string, HTMLInputElement>): { chip: HTMLButtonElement; members: Set<string> } {
  const engines = set.engines.flatMap((id) => byId.get(id) ?? []);
  const members = new Set(engines.filter((e) => !checkboxes.get(e.id)!.disabled).map((e) => e.id));
  const missing = engines.filter((e) => !members.has(e.id));
  const title = [
    members.size > 0 ? `Selects ${engines.filter((e) => members.has(e.id)).map((e) => e.label).join(', ')}` : 'None of its engines can run here',
    missing.length > 0 ? `not configured: ${missing.map((e) => e.label).join(', ')}` : null,
  ].filter(Boolean).join('; ');
  const chip = el('button', {
    type: 'button',
    class: 'chip set-chip',
    'data-set': set.name,
    'aria-pressed': 'false',
    title,
    disabled: members.size === 0,
  }, `@${set.name}`);
  return { chip, members };
}

function engineItem(engine: EngineView, box: HTMLInputElement): HTMLElement {
  const tags = engine.tags.filter((t) => !HIDDEN_TAGS.has(t));
  return el('div', { class: `engine${engine.configured ? '' : ' unavailable'}`, 'data-engine': engine.id },
    box,
    el('label', { for: box.id },
      el('span', { class: 'engine-name' }, engine.label),
      ' ',
      el('code', { class: 'engine-id' }, engine.id)),
    el('p', { class: 'engine-desc', id: `engine-${engine.id}-desc` },
      engine.description,
      engine.configured ? null : el('span', { class: 'needs-key' }, needsKey(engine))),
    el('p', { class: 'tags' }, tags.map((t) => el('span', { class: `tag${t === 'default' ? ' tag-default' : ''}` }, t))));
}

/** Why an engine cannot be selected: the credentials it lacks and where to set them. */
function needsKey(engine: EngineView): string {
  if (engine.catalog === 'custom') {
    // A custom engine's secrets come only from the server's environment: the hint is their variables.
    const variables = [...new Set(engine.configure_hint.split('; ').filter(Boolean))];
    if (variables.length > 0) return ` Needs ${variables.length === 1 ? 'the environment variable' : 'the environment variables'} ${variables.join(' and ')} where oas runs.`;
  }
  return ` Needs ${engine.credentials.join(' and ') || 'a key'}: set ${engine.configure_hint}.`;
}

void main();

