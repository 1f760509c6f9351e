/**
 * The analyze form's file (issue 35): a labelled file input (the keyboard's way in) and the whole
 * form as a drop zone. A file chosen or dropped is posted to `POST {prefix}extract` at once and its
 * observables are listed with a checkbox each (web/src/file-preview.ts); the server's refusal (a
 * malformed, encrypted or too large file) goes to the form's problem bar, and the file is let go.
 * The form's Analyze then sends the same file with the checked values (web/src/index.ts).
 *
 * Only the last file chosen counts: the answer for a file replaced meanwhile is dropped.
 */
import { apiPath, postForm } from './api.js';
import { el } from './dom.js';
import { renderPreview, type PreviewList } from './file-preview.js';
import { fileProblemOf, type FormProblem } from './form-problem.js';
import type { FilePreviewView } from '../../src/view/types.js';

export interface FileDrop {
  /** The field: label, input, its hint and status, the preview. */
  element: HTMLElement;
  input: HTMLInputElement;
  /** The file whose observables are listed; null when none (or it could not be read). */
  file(): File | null;
  /** Whether a file is being read (its preview not there yet). */
  reading(): boolean;
  /** The checked observables' values. */
  checked(): string[];
  /** Where the focus goes when the file needs fixing: the preview's first checkbox, else the input. */
  focusTarget(): HTMLElement;
  /** Makes `zone` (the form) take a dropped file. */
  dropOn(zone: HTMLElement): void;
}

export interface FileDropHooks {
  problem(problem: FormProblem): void;
  clearProblem(): void;
}

export function fileDrop(hooks: FileDropHooks, options: { disabled?: boolean } = {}): FileDrop {
  const input = el('input', { type: 'file', id: 'file', name: 'file', 'aria-describedby': 'file-hint file-status', disabled: options.disabled === true });
  const remove = el('button', { type: 'button', class: 'link-button', id: 'file-remove', hidden: true }, 'Remove file');
  const status = el('p', { class: 'hint file-status', id: 'file-status', role: 'status', 'aria-live': 'polite' });
  const slot = el('div', { class: 'file-preview-slot', id: 'file-preview-slot' });
  const element = el('div', { class: 'field file-field', id: 'file-field' },
    el('label', { for: 'file', class: 'field-label' }, 'File ', el('span', { class: 'muted' }, '(optional)')),
    el('div', { class: 'file-pick' }, input, remove),
    el('p', { id: 'file-hint', class: 'hint' }, 'Or drop a file on the form: an e-mail (.eml, .msg), a PDF, a CSV or TSV, JSON, any text. Its observables are listed here first; nothing is sent to an engine before Analyze.'),
    status,
    slot);

  let chosen: File | null = null;
  let list: PreviewList | null = null;
  let pending = false;
  let generation = 0;

  function reset(): void {
    generation++;
    chosen = null;
    list = null;
    pending = false;
    input.value = '';
    remove.hidden = true;
    status.textContent = '';
    slot.replaceChildren();
  }

  async function read(file: File): Promise<void> {
    const mine = ++generation;
    hooks.clearProblem();
    chosen = null;
    list = null;
    pending = true;
    slot.replaceChildren();
    remove.hidden = false;
    status.textContent = `Reading ${file.name || 'the file'}…`;
    const body = new FormData();
    body.append('file', file, file.name || 'file');
    try {
      const preview = await postForm<FilePreviewView>(apiPath('extract'), body, { signIn: false });
      if (mine !== generation) return;
      pending = false;
      chosen = file;
      list = renderPreview(preview);
      status.textContent = '';
      slot.replaceChildren(list.element);
    } catch (error) {
      if (mine !== generation) return;
      reset();
      hooks.problem(fileProblemOf(error));
    }
  }

  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file) void read(file);
    else reset();
  });
  remove.addEventListener('click', () => {
    reset();
    hooks.clearProblem();
    input.focus();
  });

  /** The zone (the form) takes a dropped file, and shows so (class `dragging`) while one is dragged over it. */
  function dropOn(zone: HTMLElement): void {
    let depth = 0;
    const carriesFiles = (event: DragEvent) => event.dataTransfer?.types.includes('Files') === true;
    zone.addEventListener('dragenter', (event) => {
      if (!carriesFiles(event) || input.disabled) return;
      event.preventDefault();
      depth++;
      zone.classList.add('dragging');
    });
    zone.addEventListener('dragover', (event) => {
      if (!carriesFiles(event) || input.disabled) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
    });
    zone.addEventListener('dragleave', () => {
      depth = Math.max(0, depth - 1);
      if (depth === 0) zone.classList.remove('dragging');
    });
    zone.addEventListener('drop', (event) => {
      depth = 0;
      zone.classList.remove('dragging');
      if (!carriesFiles(event) || input.disabled) return;
      event.preventDefault();
      const file = event.dataTransfer?.files[0];
      if (!file) return;
      try {
        // The input names the dropped file too (where the browser lets a script set it).
        input.files = event.dataTransfer!.files;
      } catch {
        // left as it was: the status and the preview name the file
      }
      void read(file);
    });
  }

  return {
    element,
    input,
    file: () => chosen,
    reading: () => pending,
    checked: () => list?.checked() ?? [],
    focusTarget: () => list?.firstBox() ?? input,
    dropOn,
  };
}
