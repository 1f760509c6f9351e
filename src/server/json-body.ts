/**
 * The JSON body of a request to an API route that takes only JSON: a Content-Type other than
 * `application/json` is answered 415 saying which object is expected (`shape`), a body that is no
 * JSON 400, each as `{"error": "..."}` like the rest of the API.
 */
import type { Context } from 'hono';

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
