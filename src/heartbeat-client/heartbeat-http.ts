/**
 * The heartbeat client's HTTP exchange over undici (the keeper's own HTTP client). The keeper's
 * answers are small JSON; a wrong URL may serve a large page, so only the first 4 KiB are read and
 * the rest of the body is dropped with the connection.
 */
import { request } from 'undici';

export interface HttpCall {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Aborted at the timeout or on stop; the request should reject then. */
  signal: AbortSignal;
}

/** One HTTP exchange: the status and (at most the first few KiB of) the body; rejects when there is no answer. */
export type HttpRequest = (call: HttpCall) => Promise<{ status: number; body: string }>;

export const MAX_ANSWER_BYTES = 4096;

export async function undiciRequest(call: HttpCall): Promise<{ status: number; body: string }> {
  const res = await request(call.url, {
    method: call.method,
    headers: call.headers,
    ...(call.body !== undefined ? { body: call.body } : {}),
    signal: call.signal,
  });
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes >= MAX_ANSWER_BYTES) {
      res.body.destroy();
      break;
    }
  }
  return { status: res.statusCode, body: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8') };
}
