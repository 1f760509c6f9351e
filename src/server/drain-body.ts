/**
 * A request answered without reading its body (a 401, 404 or 421 to a POST) still has its upload
 * read, up to `max_body_bytes`, before the answer goes out. Otherwise the server closes a socket
 * with unread data, the client's upload meets a TCP reset and it never sees the answer.
 */
import type { MiddlewareHandler } from 'hono';

export function drainUnreadBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    await next();
    // A GET or HEAD has no upload, and touching `c.req.raw` would build the full web Request
    // (an AbortController and all) that the Node adapter otherwise never needs for it.
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return;
    const request = c.req.raw;
    if (!request.body || request.bodyUsed) return;
    const reader = request.body.getReader();
    try {
      for (let read = 0; read <= maxBytes;) {
        const { done, value } = await reader.read();
        if (done) return;
        read += value.byteLength;
      }
      await reader.cancel(); // larger than any accepted body: let the connection close
    } catch {
      // the client went away: nothing to answer
    }
  };
}
