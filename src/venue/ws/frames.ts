/**
 * The wire format of the venue's notification WebSocket (spec part 6, VENUE.md "WebSocket"), kept
 * pure so every odd frame the venue might send is tested without a socket.
 */
import { VENUE_FACTS } from '../facts.js';

const ADDRESS_RE = /^0x[0-9a-f]{40}$/;
const ADDRESS_IN_TEXT_RE = /0x[0-9a-fA-F]{40}(?![0-9a-fA-F])/g;
/** Enough of an odd frame to recognise it in a log, never a whole (possibly huge) payload. */
const SAMPLE_MAX_CHARS = 200;

/** Lower-cased address, or undefined when `raw` is not a 20-byte hex address. */
export function normalizeAddress(raw: string): string | undefined {
  const lower = raw.trim().toLowerCase();
  return ADDRESS_RE.test(lower) ? lower : undefined;
}

export type SubscriptionMethod = 'subscribe' | 'unsubscribe';

export function encodeSubscription(method: SubscriptionMethod, user: string): string {
  // Key order matters to nobody but humans reading captures; keep it as the venue documents it.
  return JSON.stringify({ method, subscription: { type: 'notification', user } });
}

export function encodePing(): string {
  return JSON.stringify({ method: 'ping' });
}

export const UNPARSED_REASONS = ['not_json', 'binary', 'unknown_channel', 'malformed'] as const;
export type UnparsedReason = (typeof UNPARSED_REASONS)[number];

export type ServerFrame =
  | { kind: 'greeting' }
  | { kind: 'pong' }
  | { kind: 'subscription_ack'; method: SubscriptionMethod | 'other'; subscriptionType?: string; user?: string }
  | { kind: 'error'; message: string }
  | { kind: 'notification'; text: string; user?: string }
  | { kind: 'unparsed'; reason: UnparsedReason; sample: string };

function sample(text: string): string {
  return text.length > SAMPLE_MAX_CHARS ? `${text.slice(0, SAMPLE_MAX_CHARS)}…` : text;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringify(v: unknown): string {
  try {
    return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  } catch {
    return String(v);
  }
}

/** Text of a `ws` message payload (Buffer, Buffer[] or ArrayBuffer), or of a plain string. */
export function rawToText(data: unknown): string {
  if (typeof data === 'string') return data;
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data.filter((b): b is Buffer => Buffer.isBuffer(b))).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return '';
}

/** Never throws: anything it cannot make sense of comes back as `unparsed`. */
export function parseServerFrame(data: unknown, isBinary: boolean): ServerFrame {
  const text = rawToText(data);
  if (isBinary) return { kind: 'unparsed', reason: 'binary', sample: `<${text.length} bytes>` };
  if (text === VENUE_FACTS.wsGreeting) return { kind: 'greeting' };
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return { kind: 'unparsed', reason: 'not_json', sample: sample(text) };
  }
  if (!isRecord(msg) || typeof msg.channel !== 'string') {
    return { kind: 'unparsed', reason: 'malformed', sample: sample(text) };
  }
  const data_ = msg.data;
  switch (msg.channel) {
    case 'pong':
      return { kind: 'pong' };
    case 'error':
      return { kind: 'error', message: stringify(data_ ?? '') };
    case 'subscriptionResponse': {
      if (!isRecord(data_)) return { kind: 'unparsed', reason: 'malformed', sample: sample(text) };
      const method = data_.method === 'subscribe' || data_.method === 'unsubscribe' ? data_.method : 'other';
      const sub = isRecord(data_.subscription) ? data_.subscription : undefined;
      const user = typeof sub?.user === 'string' ? normalizeAddress(sub.user) : undefined;
      const subscriptionType = typeof sub?.type === 'string' ? sub.type : undefined;
      return { kind: 'subscription_ack', method, subscriptionType, user };
    }
    case 'notification': {
      // The payload shape is not published (ASSUMED.notificationTextField). A notification of an
      // unexpected shape is still a reason to reconcile, so it is delivered with its JSON as text
      // rather than dropped.
      if (data_ === undefined) return { kind: 'unparsed', reason: 'malformed', sample: sample(text) };
      const note = isRecord(data_) ? data_.notification : data_;
      const user = isRecord(data_) && typeof data_.user === 'string' ? normalizeAddress(data_.user) : undefined;
      return { kind: 'notification', text: stringify(note ?? data_), user };
    }
    default:
      return { kind: 'unparsed', reason: 'unknown_channel', sample: sample(text) };
  }
}

/** The one candidate whose address appears in `text`, if exactly one does. */
export function userNamedIn(text: string, candidates: readonly string[]): string | undefined {
  const named = new Set<string>();
  for (const m of text.matchAll(ADDRESS_IN_TEXT_RE)) {
    const addr = m[0].toLowerCase();
    if (candidates.includes(addr)) named.add(addr);
  }
  return named.size === 1 ? [...named][0] : undefined;
}

/**
 * Which account a notification concerns, when that can be told: the venue's text does not name
 * the user, so we only claim one when there is no doubt. `candidates` are the users subscribed on
 * the connection the notification arrived on.
 */
export function attributeNotification(
  text: string,
  explicitUser: string | undefined,
  candidates: readonly string[],
): string | undefined {
  if (explicitUser !== undefined) return explicitUser;
  if (candidates.length === 1) return candidates[0];
  return userNamedIn(text, candidates);
}
