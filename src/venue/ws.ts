/**
 * The venue's notification WebSocket (spec 4.16 and part 6). Implementation lives in `./ws/`;
 * import from here.
 */
export { NotificationClient } from './ws/client.js';
export { backoffCeilingMs, backoffDelayMs, DEFAULT_BACKOFF, type BackoffOptions } from './ws/backoff.js';
export {
  attributeNotification,
  encodePing,
  encodeSubscription,
  normalizeAddress,
  parseServerFrame,
  UNPARSED_REASONS,
  type ServerFrame,
  type UnparsedReason,
} from './ws/frames.js';
export {
  CONNECTION_STATES,
  defaultSocketFactory,
  DISCONNECT_REASONS,
  wsEndpoint,
  type ConnectionInfo,
  type ConnectionStateName,
  type DisconnectReason,
  type NotificationClientCounters,
  type NotificationClientEvent,
  type NotificationClientEventType,
  type NotificationClientOptions,
  type SocketFactory,
  type SocketLike,
  type SubscribeResult,
} from './ws/types.js';
