/** The copy buttons of one observable: as written, defanged, and its whole result as JSON. */
import { copyButton } from './clipboard.js';
import { defang } from './format.js';
import type { ObservableView } from '../../src/view/types.js';

/** `result` gives the observable's result object, for "copy JSON". */
export function copyButtons(row: ObservableView, result: () => unknown): HTMLButtonElement[] {
  const buttons = [
    copyButton('Copy', () => row.observable, `Copy ${row.observable}`),
    copyButton('Defanged', () => defang(row.observable, row.type), `Copy ${row.observable} defanged`),
  ];
  if (row.done) buttons.push(copyButton('JSON', () => JSON.stringify(result() ?? null, null, 2), `Copy the result of ${row.observable} as JSON`));
  return buttons;
}
