import { callerProblem, endpointTooLong, keyProblem, MAX_ENDPOINT_LENGTH } from '../key/key-limits.js';
import { payloadFingerprint } from '../key/payload-fingerprint.js';
import { type IdempotentRequest, idempotentRequest } from '../key/idempotent-request.js';
import { scopeKey } from '../key/scoped-key.js';
import type { MessageSettings } from './message-settings.js';
import type { ReceivedMessage } from './message/received-message.js';

/** A message the entry cannot de-duplicate, and why. */
export interface MalformedMessage {
  malformed: string;
}

/** How a message's endpoint begins: its pattern follows. */
const ENDPOINT_PREFIX = 'MESSAGE ';

/**
 * The idempotent request a message stands for: its key (the broker's id, or the handler's `key`
 * function), scoped by the handler's pattern (`MESSAGE <pattern>`) and tenant; its fingerprint its
 * payload's (`payloadFingerprint`). A message whose key, tenant or pattern a row cannot hold
 * (`key-limits.ts`), or whose payload is not JSON, is malformed: nothing is reserved for it.
 */
export function readMessage(message: ReceivedMessage, settings: MessageSettings): IdempotentRequest | MalformedMessage {
  if (message.malformed !== undefined) return { malformed: message.malformed };
  const key = settings.keyOf(message);
  const wrongKey = keyProblem(key);
  if (wrongKey !== undefined) {
    return {
      malformed:
        wrongKey === 'missing'
          ? "the message has no key (its message id, or the handler's key function, gave none)"
          : `the message's key ${wrongKey}`,
    };
  }
  const tenant = settings.tenantOf(message) ?? '';
  if (typeof tenant !== 'string' || callerProblem(tenant) !== undefined) {
    return { malformed: "the message's tenant is not a string of at most 256 bytes that PostgreSQL can store" };
  }
  const endpoint = `${ENDPOINT_PREFIX}${message.pattern}`;
  if (endpointTooLong(endpoint))
    return { malformed: `the message's pattern is longer than ${MAX_ENDPOINT_LENGTH - ENDPOINT_PREFIX.length} bytes` };
  return idempotentRequest(scopeKey(key as string, tenant, endpoint, settings.keyStorage), settings.ttlMs, () =>
    payloadFingerprint(message.data),
  );
}

export function isMalformed(read: IdempotentRequest | MalformedMessage): read is MalformedMessage {
  return 'malformed' in read;
}
