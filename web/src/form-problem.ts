/**
 * Why the analyze form could not start an analysis, in words fit for the bar next to its Analyze
 * button, and what the user has to fix: the text, the engine choice, the session, or nothing but
 * waiting and pressing Analyze again. The form moves the focus there (web/src/index.ts).
 */
import { ApiError } from './api.js';

/** Where the focus goes: the text area, the engine picker, the sign-in link, the Analyze button. */
export type FormFix = 'text' | 'engines' | 'signin' | 'submit';

export interface FormProblem {
  message: string;
  fix: FormFix;
}

/** Nothing pasted (the server is not asked). */
export const NO_TEXT: FormProblem = {
  message: 'Paste at least one observable: a domain, an IP address, a URL, a hash, an e-mail address or a browser extension id.',
  fix: 'text',
};

/** No engine selected (the server is not asked). */
export const NO_ENGINE: FormProblem = { message: 'Select at least one engine.', fix: 'engines' };

/** The server's refusal of POST {prefix}analyze, or a failure to reach it. */
export function problemOf(error: unknown): FormProblem {
  if (!(error instanceof ApiError)) return { message: 'The analysis could not be started.', fix: 'submit' };
  const said = sentence(error.message);
  switch (error.status) {
    case 400:
      // "no engine selected", "unknown engine ..." name the engines; the rest is about the text.
      return { message: said, fix: /\bengines?\b/i.test(error.message) && !/\bobservables?\b/i.test(error.message) ? 'engines' : 'text' };
    case 401:
      return { message: 'Sign in to analyze: this server asks for its API token, and this browser holds no valid session. What you typed stays here.', fix: 'signin' };
    case 413:
      return { message: `Too much for one analysis (${error.message}): split the text into several analyses.`, fix: 'text' };
    case 429:
      return { message: `${said} Then press Analyze again.`, fix: 'submit' };
    default:
      return { message: error.status === 0 ? said : `The analysis could not be started: ${error.message}`, fix: 'submit' };
  }
}

/** The server's lower-case message as a sentence: capital first letter, final full stop. */
function sentence(message: string): string {
  const text = message.trim();
  if (text === '') return 'The analysis could not be started.';
  const capital = text[0]!.toUpperCase() + text.slice(1);
  return /[.!?…]$/.test(capital) ? capital : `${capital}.`;
}
