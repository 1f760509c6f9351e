/** Exit codes and the usage error shared by the commands. */
export const EXIT_OK = 0;
/** Every selected engine failed, or the server could not start. */
export const EXIT_FAILED = 1;
/** Usage errors and bad input. */
export const EXIT_USAGE = 2;

/** A problem the user can fix; printed as `oas: <message>`, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A message as one line (a path, a value or an upstream's text may hold a line break). */
export function oneLine(message: string): string {
  return message.replace(/\s*[\r\n]+\s*/g, ' ');
}
