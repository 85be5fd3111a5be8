import type { IdempotentRequest } from '../key/idempotent-request.js';
import { MAX_CALLER_BYTES } from '../key/key-limits.js';
import { payloadFingerprint } from '../key/payload-fingerprint.js';
import { buildRequest, ENDPOINT_PREFIXES, isRefusal } from '../key/request-builder.js';
import type { MessageSettings } from './message-settings.js';
import type { ReceivedMessage } from './message/received-message.js';

/** A message the entry cannot de-duplicate, and why. */
export interface MalformedMessage {
  malformed: string;
}

/**
 * The idempotent request a message stands for: its key (the broker's id, or the handler's `key`
 * function), scoped by the handler's pattern (`MESSAGE <pattern>`) and tenant; its fingerprint its
 * payload's (`payloadFingerprint`). A message whose key, tenant or pattern a row cannot hold
 * (`key-limits.ts`), or whose payload is not JSON, is malformed: nothing is reserved for it.
 */
export function readMessage(message: ReceivedMessage, settings: MessageSettings): IdempotentRequest | MalformedMessage {
  if (message.malformed !== undefined) return { malformed: message.malformed };
  const built = buildRequest({
    key: settings.keyOf(message),
    caller: settings.tenantOf(message) ?? '',
    anonymous: 'shared',
    endpoint: { prefix: ENDPOINT_PREFIXES.message, name: message.pattern },
    ttlMs: settings.ttlMs,
    tombstoneMs: settings.tombstoneMs,
    keyStorage: settings.keyStorage,
    fingerprint: () => payloadFingerprint(message.data),
  });
  if (!isRefusal(built)) return built;
  switch (built.refused) {
    case 'key':
      return {
        malformed:
          built.problem === 'missing'
            ? "the message has no key (its message id, or the handler's key function, gave none)"
            : `the message's key ${built.problem}`,
      };
    case 'endpoint':
      return { malformed: `the message's pattern is longer than ${built.maxNameBytes} bytes` };
    case 'anonymous':
    case 'caller':
      return {
        malformed: `the message's tenant is not a string of at most ${MAX_CALLER_BYTES} bytes that PostgreSQL can store`,
      };
  }
}

export function isMalformed(read: IdempotentRequest | MalformedMessage): read is MalformedMessage {
  return 'malformed' in read;
}
