/**
 * The URLs the heartbeat client talks to, checked before anything is sent: a typo in a URL is a
 * usage error at start, not a stream of failed heartbeats that the keeper reads as a dead bot.
 */

export class HeartbeatUrlError extends Error {
  readonly code = 'HEARTBEAT_URL' as const;
  constructor(message: string) {
    super(message);
    this.name = 'HeartbeatUrlError';
  }
}

/** An http(s) URL without a fragment; `what` names the option in the message. */
export function parseHttpUrl(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HeartbeatUrlError(`${what} is not a URL: '${redactUrl(text)}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HeartbeatUrlError(`${what} must be an http:// or https:// URL: '${redactUrl(text)}'`);
  if (url.hash !== '') throw new HeartbeatUrlError(`${what} must not have a #fragment`);
  return url;
}

/**
 * `POST` target for a keeper base URL (`http://127.0.0.1:9464`, or a path prefix behind a proxy:
 * `https://ops.example.com/keeper/`). A URL that already ends in /heartbeat is refused: it would
 * post to /heartbeat/heartbeat and read the 404 as a refusal.
 */
export function heartbeatEndpoint(base: string): string {
  const url = parseHttpUrl(base, '--url');
  if (url.search !== '') throw new HeartbeatUrlError('--url is the keeper\'s base URL: no ?query');
  const path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/heartbeat')) throw new HeartbeatUrlError('--url is the keeper\'s base URL (e.g. http://127.0.0.1:9464), without /heartbeat');
  url.pathname = `${path}/heartbeat`;
  return url.toString();
}

/**
 * A URL fit for a log line: user and password replaced (a proxy's basic-auth credentials in the
 * URL must not reach the journal). Text that does not parse is shown only up to its scheme.
 */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    // `bot:secret@host` parses too, as scheme `bot:`: only http(s) has a user part to replace.
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HeartbeatUrlError('not http');
    if (url.username !== '' || url.password !== '') {
      url.username = 'redacted';
      url.password = '';
    }
    return url.toString();
  } catch {
    return text.includes('@') ? '[unparsable URL, not shown]' : text;
  }
}
