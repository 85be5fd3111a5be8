import type { Answer } from './http.js';

/** Headers of the connection or the transfer, which any answer may have. */
const TRANSPORT_HEADERS = new Set(['content-length', 'transfer-encoding', 'date', 'connection', 'keep-alive']);

/**
 * Asserts that `replay` is a faithful replay of `first`: marked as one, the same status and body
 * bytes, and no header the first answer did not have.
 */
export function expectFaithfulReplay(first: Answer, replay: Answer): void {
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.status).toBe(first.status);
  expect(replay.body.equals(first.body)).toBe(true);
  const added = Object.keys(replay.headers).filter(
    (name) => !(name in first.headers) && name !== 'idempotent-replayed' && !TRANSPORT_HEADERS.has(name),
  );
  expect(added).toEqual([]);
  expect(replay.headers['content-type']).toBe(first.headers['content-type']);
}
