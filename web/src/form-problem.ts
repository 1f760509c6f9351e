/**
 * Why the analyze form could not start an analysis, in words fit for the bar next to its Analyze
 * button, and what the user has to fix: the text, the engine choice, the file (issue 35: one that
 * cannot be read, or none of its observables checked), the session, or nothing but waiting and
 * pressing Analyze again. The form moves the focus there (web/src/index.ts).
 */
import { ApiError } from './api.js';

/** Where the focus goes: the text area, the engine picker, the file field, the sign-in link, the Analyze button. */
export type FormFix = 'text' | 'engines' | 'file' | 'signin' | 'submit';

export interface FormProblem {
  message: string;
  fix: FormFix;
}

/** Nothing pasted and no file (the server is not asked). */
export const NO_TEXT: FormProblem = {
  message: 'Paste at least one observable: a domain, an IP address, a URL, a hash, an e-mail address or a browser extension id; or choose a file.',
  fix: 'text',
};

/** No engine selected (the server is not asked). */
export const NO_ENGINE: FormProblem = { message: 'Select at least one engine.', fix: 'engines' };

/** A file whose observables are all unchecked, and nothing pasted (the server is not asked). */
export const NO_CHECKED: FormProblem = { message: 'Check at least one observable of the file, or paste some.', fix: 'file' };

/** The file is still being read when Analyze is pressed. */
export const FILE_READING: FormProblem = { message: 'The file is still being read: press Analyze again once its observables are listed.', fix: 'file' };

/**
 * The server's refusal of POST {prefix}extract (the file chosen or dropped), or a failure to reach
 * it: the server's line names the file and what is wrong with it.
 */
export function fileProblemOf(error: unknown): FormProblem {
  if (!(error instanceof ApiError)) return { message: 'The file could not be read.', fix: 'file' };
  switch (error.status) {
    case 0:
      return { message: sentence(error.message), fix: 'file' };
    case 401:
      return { message: 'Sign in to read files: this server asks for its API token, and this browser holds no valid session.', fix: 'signin' };
    case 413:
      return { message: `The file is too large: ${stopped(error.message)}`, fix: 'file' };
    case 429:
    case 503:
      return { message: `${sentence(error.message)} Then choose the file again.`, fix: 'file' };
    default:
      return { message: `The file could not be read: ${stopped(error.message)}`, fix: 'file' };
  }
}

/**
 * The server's refusal of POST {prefix}analyze, or a failure to reach it. `withFile`: the analysis
 * was sent with a file (multipart), whose problems (too large, unreadable, no observable kept)
 * point at the file field.
 */
export function problemOf(error: unknown, withFile = false): FormProblem {
  if (!(error instanceof ApiError)) return { message: 'The analysis could not be started.', fix: 'submit' };
  const said = sentence(error.message);
  if (withFile) {
    if (error.status === 413) return { message: `Too much for one analysis (${error.message}): choose a smaller file, or check fewer observables.`, fix: 'file' };
    if (error.status === 422) return { message: `The file could not be read: ${stopped(error.message)}`, fix: 'file' };
    if (error.status === 400 && !/\bengines?\b/i.test(error.message)) return { message: said, fix: 'file' };
  }
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

/** The server's message after a colon, as written (it may start with a file's name), with a final full stop. */
function stopped(message: string): string {
  const text = message.trim();
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}

/** The server's lower-case message as a sentence: capital first letter, final full stop. */
function sentence(message: string): string {
  const text = message.trim();
  if (text === '') return 'The analysis could not be started.';
  const capital = text[0]!.toUpperCase() + text.slice(1);
  return /[.!?…]$/.test(capital) ? capital : `${capital}.`;
}
