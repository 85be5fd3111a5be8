import { createHash } from 'node:crypto';
import { canonicalJson } from './fingerprint.js';

/**
 * The fingerprint of a payload that is data (a message's, a call's): the SHA-256 of its canonical
 * JSON, so that the order of an object's keys does not matter; `undefined` counts as `null`.
 */
export function payloadFingerprint(payload: unknown): Buffer {
  return createHash('sha256')
    .update(canonicalJson(payload ?? null))
    .digest();
}
