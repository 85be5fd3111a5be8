import type { StoredResponse } from '../store/stored-response.js';

/** The status a recorded result carries: the work ran and its result is kept. */
export const SUCCEEDED = 200;
/** The status of a recorded failure (the work failed, and the failure is kept instead of run again). */
const FAILED = 500;

const JSON_HEADERS: [string, string][] = [['content-type', 'application/json']];

/** What a completed key holds, read back: the work's result, or its recorded failure. */
export type RecordedResult = { kind: 'succeeded'; value: unknown } | { kind: 'failed'; error: string };

/** What is kept of a result: its JSON (`null` for none), so that a later call gets it back. */
export function resultRecord(value: unknown): StoredResponse {
  return {
    status: SUCCEEDED,
    headers: JSON_HEADERS,
    body: Buffer.from(JSON.stringify(value === undefined ? null : value) ?? 'null'),
  };
}

/** What is kept of a failure that is recorded: the error's message and the attempts made. */
export function failureRecord(error: unknown, attempts: number): StoredResponse {
  const message = (error as { message?: unknown })?.message;
  return {
    status: FAILED,
    headers: JSON_HEADERS,
    body: Buffer.from(JSON.stringify({ error: typeof message === 'string' ? message : String(error), attempts })),
  };
}

/** A completed key's recorded result. */
export function recordedResult(stored: StoredResponse): RecordedResult {
  const recorded = JSON.parse(stored.body.toString('utf8') || 'null') as unknown;
  if (stored.status === FAILED)
    return { kind: 'failed', error: String((recorded as { error?: unknown } | null)?.error ?? 'failed') };
  return { kind: 'succeeded', value: recorded };
}
