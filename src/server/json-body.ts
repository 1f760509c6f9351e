/**
 * The JSON body of a request to an API route that takes only JSON: a Content-Type other than
 * `application/json` is answered 415 saying which object is expected (`shape`), a body that is no
 * JSON 400, each as `{"error": "..."}` like the rest of the API; a body its schema refuses 400
 * too (`validBody`).
 */
import type { Context } from 'hono';
import * as v from 'valibot';

/** The parsed body, or the answer that refuses it. */
export async function jsonBody(c: Context, shape: string): Promise<{ body: unknown } | Response> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header('content-type') ?? '')) {
    return c.json({ error: `Content-Type must be application/json (a ${shape} object)` }, 415);
  }
  try {
    return { body: JSON.parse(await c.req.text()) as unknown };
  } catch {
    return c.json({ error: 'request body is not valid JSON' }, 400);
  }
}

/** The body checked against `schema`, or the 400 naming its first problem (`engines.0: expected ...`). */
export function validBody<S extends v.GenericSchema>(c: Context, schema: S, body: unknown): v.InferOutput<S> | Response {
  const parsed = v.safeParse(schema, body);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const at = issue.path?.map((p) => String(p.key)).join('.');
  return c.json({ error: at ? `${at}: ${issue.message}` : issue.message }, 400);
}
