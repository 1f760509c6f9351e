/**
 * The pages' small forms that post to the API (a watchlist, an allowlist entry, a mark): a labelled
 * field with its hint, the line beside the button that says why the server refused, and the submit
 * that prevents the page load, clears that line, disables the button while it runs and says the
 * refusal. The API's message goes in as text.
 */
import { el } from './dom.js';

/** A label, its control and, under it, a hint. */
export function field(label: string, input: HTMLElement, hint?: string): HTMLLabelElement {
  return el('label', { class: 'field' }, el('span', { class: 'field-label' }, label), input, hint ? el('span', { class: 'hint' }, hint) : null);
}

export interface ProblemLine {
  element: HTMLParagraphElement;
  /** Shows `text`; an empty one hides the line. */
  say(text: string): void;
}

/** The line that says why a form's request failed, hidden until it does. */
export function problemLine(id: string): ProblemLine {
  const element = el('p', { class: 'form-error', id, role: 'alert', hidden: true });
  return {
    element,
    say(text: string) {
      element.textContent = text;
      element.hidden = text === '';
    },
  };
}

/** A form's submit handler: `send` runs with `submit` disabled; what it throws is said on `problem`. */
export function submitting(submit: HTMLButtonElement, problem: ProblemLine, send: () => Promise<void>): (event: Event) => void {
  return (event: Event) => {
    event.preventDefault();
    void (async () => {
      problem.say('');
      submit.disabled = true;
      try {
        await send();
      } catch (error) {
        problem.say(errorText(error));
      } finally {
        submit.disabled = false;
      }
    })();
  };
}

/** An error's message, fit to show. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
