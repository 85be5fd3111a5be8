import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { StoredResponse } from '../stored-response.js';
import {
  clearOutcome,
  type OutcomeOwner,
  type OutcomeRow,
  sealedWith,
  type StoredOutcomes,
} from './stored-outcomes.js';
import { UnreadableOutcomeError } from './unreadable-outcome.error.js';

/** One AES-256 key of `storage.encryption.keys`: its id (stored in each row it seals) and its 32 bytes. */
export interface OutcomeKey {
  readonly id: string;
  readonly key: Buffer;
}

/** The first byte of a sealed body: the layout below, so that another can follow. */
const LAYOUT_V1 = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES;

/**
 * Outcomes sealed with AES-256-GCM. A sealed row's `response_headers` is `{"sealedWith": id}` and
 * its `response_body` is one byte of layout, a random 12-byte IV, the 16-byte tag, and the
 * ciphertext of the headers' JSON (length first, 4 bytes) followed by the body. The additional
 * data binds the ciphertext to its row: the digests of the key and of the endpoint, the status and
 * the fingerprint, so a sealed outcome copied into another row, or a status changed, fails its tag.
 * Rows are sealed with the first key; any listed key opens them. A row in clear (written before
 * encryption was turned on) is read as it is, until the resealing job seals it.
 */
export class SealedOutcomes implements StoredOutcomes {
  private readonly byId: ReadonlyMap<string, Buffer>;

  constructor(private readonly keys: readonly OutcomeKey[]) {
    this.byId = new Map(keys.map(({ id, key }) => [id, key]));
  }

  /** The id of the key new rows are sealed with. */
  get currentKeyId(): string {
    return this.keys[0]!.id;
  }

  columns(response: StoredResponse, owner: OutcomeOwner, fingerprint: Buffer): [string, Buffer] {
    return this.seal(response, owner, fingerprint, this.keys[0]!);
  }

  read(row: OutcomeRow, owner: OutcomeOwner): StoredResponse {
    const id = sealedWith(row.response_headers);
    if (id === undefined) return clearOutcome(row);
    const key = this.byId.get(id);
    if (!key)
      throw new UnreadableOutcomeError(
        `it is sealed with the key "${id}", which storage.encryption.keys does not list`,
        id,
      );
    const sealed = row.response_body;
    if (!sealed || sealed.length < HEADER_BYTES || sealed[0] !== LAYOUT_V1) {
      throw new UnreadableOutcomeError(`its sealed body (key "${id}") is not in a layout this version reads`, id);
    }
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 1 + IV_BYTES));
      decipher.setAuthTag(sealed.subarray(1 + IV_BYTES, HEADER_BYTES));
      decipher.setAAD(additionalData(owner, row.fingerprint, row.status!));
      plain = Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES)), decipher.final()]);
    } catch {
      throw new UnreadableOutcomeError(
        `its authentication tag does not match (key "${id}"): the row was altered, or sealed under another key of that id`,
        id,
      );
    }
    const headersLength = plain.readUInt32BE(0);
    return {
      status: row.status!,
      headers: JSON.parse(plain.subarray(4, 4 + headersLength).toString('utf8')) as [string, string][],
      body: plain.subarray(4 + headersLength),
    };
  }

  /** `response` sealed with `key`, as the row's two columns. */
  seal(response: StoredResponse, owner: OutcomeOwner, fingerprint: Buffer, key: OutcomeKey): [string, Buffer] {
    const headers = JSON.stringify(response.headers);
    const headersLength = Buffer.byteLength(headers, 'utf8');
    const plain = Buffer.allocUnsafe(4 + headersLength + response.body.length);
    plain.writeUInt32BE(headersLength, 0);
    plain.write(headers, 4, 'utf8');
    plain.set(response.body, 4 + headersLength);
    const iv = freshIv();
    const cipher = createCipheriv('aes-256-gcm', key.key, iv);
    cipher.setAAD(additionalData(owner, fingerprint, response.status));
    const ciphertext = cipher.update(plain);
    const rest = cipher.final();
    const body = Buffer.allocUnsafe(HEADER_BYTES + ciphertext.length + rest.length);
    body[0] = LAYOUT_V1;
    body.set(iv, 1);
    body.set(cipher.getAuthTag(), 1 + IV_BYTES);
    body.set(ciphertext, HEADER_BYTES);
    body.set(rest, HEADER_BYTES + ciphertext.length);
    return [JSON.stringify({ sealedWith: key.id }), body];
  }
}

/** IVs drawn from the CSPRNG `IV_BLOCK` at a time: one request in 256 pays for the draw. */
const IV_BLOCK = 256;
let ivs = Buffer.alloc(0);
let nextIv = 0;

/** A random IV handed out once: each is a slice of a block drawn for IVs alone, never given twice. */
function freshIv(): Buffer {
  if (nextIv + IV_BYTES > ivs.length) {
    ivs = randomBytes(IV_BYTES * IV_BLOCK);
    nextIv = 0;
  }
  const iv = ivs.subarray(nextIv, nextIv + IV_BYTES);
  nextIv += IV_BYTES;
  return iv;
}

/**
 * The key's digest (32 bytes), the endpoint's (32), the status (2, big-endian), the fingerprint's
 * length (2) and bytes: each part's extent is fixed or given, so no two rows share one.
 */
function additionalData(owner: OutcomeOwner, fingerprint: Buffer, status: number): Buffer {
  const fixed = Buffer.alloc(4);
  fixed.writeUInt16BE(status, 0);
  fixed.writeUInt16BE(fingerprint.length, 2);
  return Buffer.concat([owner.digest, owner.endpointDigest, fixed, fingerprint]);
}
