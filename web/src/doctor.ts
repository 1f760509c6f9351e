/**
 * The admin's check of the server's configuration on the engines' picker (issue 40): a button that
 * asks `POST {prefix}doctor` and shows its lines as `oas doctor` prints them, each as text (an
 * upstream's words never become markup).
 */
import type { DoctorReportView } from '../../src/view/types.js';
import { apiPath, postJson } from './api.js';
import { el, replace } from './dom.js';

export function doctorPanel(): HTMLElement {
  const lines = el('ul', { class: 'doctor-lines', id: 'doctor-lines' });
  const status = el('p', { class: 'hint', id: 'doctor-status', 'aria-live': 'polite' },
    'Checks the data folder, Redis, the proxy, the DNS servers and each usable engine, with one call to each engine\'s upstream.');
  const button = el('button', { type: 'button', id: 'doctor-run' }, 'Check engines and settings');
  button.addEventListener('click', async () => {
    button.disabled = true;
    replace(lines);
    status.textContent = 'Checking…';
    try {
      const report = await postJson<DoctorReportView>(apiPath('doctor'), {}, { signIn: false });
      replace(lines, report.lines.map((line) => el('li', { class: line.startsWith('FAIL') ? 'doctor-fail' : 'doctor-line' }, line)));
      status.textContent = report.ok ? 'Every check passed.' : 'Some checks failed: each line says what to fix.';
    } catch (error) {
      status.textContent = `The check could not run: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      button.disabled = false;
    }
  });
  return el('div', { class: 'doctor', id: 'doctor' }, button, status, lines);
}
