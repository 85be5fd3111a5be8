import { createHash } from 'node:crypto';
import { canonicalJson } from '../parse/fingerprint.js';
import type { IdempotentRequest } from '../parse/idempotent-request.js';
import { scopeKey } from '../parse/scoped-key.js';
import { MAX_MESSAGE_KEY_LENGTH } from './message-options.js';
import type { MessageSettings } from './message-settings.js';
import type { ReceivedMessage } from './received-message.js';

/** Printable ASCII, as an HTTP key's `printable-ascii` format: what a broker's id is. */
const PRINTABLE = /^[\x21-\x7e]+$/;

/** Longest `MESSAGE pattern` kept as a key's endpoint, as an HTTP endpoint. */
const MAX_ENDPOINT_LENGTH = 2048;

/** A message the entry cannot de-duplicate, and why. */
export interface MalformedMessage {
  malformed: string;
}

/**
 * The idempotent request a message stands for: its key (the broker's id, or the handler's `key`
 * function), scoped by the handler's pattern (`MESSAGE <pattern>`) and tenant; its fingerprint a
 * SHA-256 of the payload's canonical JSON (key order does not matter). A message with no key, a
 * key that is not printable ASCII or longer than 255 characters, a payload that is not JSON, or
 * a tenant that cannot be stored is malformed: nothing is reserved for it.
 */
export function readMessage(message: ReceivedMessage, settings: MessageSettings): IdempotentRequest | MalformedMessage {
  if (message.malformed !== undefined) return { malformed: message.malformed };
  const key = settings.keyOf(message);
  if (typeof key !== 'string' || key === '') return { malformed: 'the message has no key (its message id, or the handler\'s key function, gave none)' };
  if (key.length > MAX_MESSAGE_KEY_LENGTH) return { malformed: `the message's key is longer than ${MAX_MESSAGE_KEY_LENGTH} characters` };
  if (!PRINTABLE.test(key)) return { malformed: "the message's key is not printable ASCII" };
  const tenant = settings.tenantOf(message) ?? '';
  if (typeof tenant !== 'string' || /[\0\p{Cs}]/u.test(tenant) || Buffer.byteLength(tenant) > 256) {
    return { malformed: "the message's tenant is not a string of at most 256 bytes that PostgreSQL can store" };
  }
  const endpoint = `MESSAGE ${message.pattern}`;
  if (Buffer.byteLength(endpoint) > MAX_ENDPOINT_LENGTH) return { malformed: `the message's pattern is longer than ${MAX_ENDPOINT_LENGTH - 8} bytes` };
  let fingerprint: Buffer | undefined;
  return {
    scope: scopeKey(key, tenant, endpoint, settings.keyStorage),
    ttlMs: settings.ttlMs,
    get fingerprint() {
      return (fingerprint ??= createHash('sha256').update(canonicalJson(message.data ?? null)).digest());
    },
  };
}

export function isMalformed(read: IdempotentRequest | MalformedMessage): read is MalformedMessage {
  return 'malformed' in read;
}
