import type { StoredResponse } from '../store/stored-response.js';

/**
 * How a plain result (a message's, a job's, a mutation's, a call's) is kept in its key's row: its
 * JSON as the body, no headers, and in the status column a result code where an HTTP route keeps
 * its answer's status: `RECORDED_VALUE` for the work's value, `RECORDED_FAILURE` for a failure
 * recorded so that it is not run again.
 */
export const RECORDED_VALUE = 0;
export const RECORDED_FAILURE = 1;

/** A failure as rows written before the result codes kept it: an HTTP-like 500 (a value was a 200). */
const FAILURE_WRITTEN_AS_500 = 500;

/** Whether a recorded result code (or an older row's HTTP-like status) is a recorded failure. */
export function isRecordedFailure(status: number): boolean {
  return status === RECORDED_FAILURE || status === FAILURE_WRITTEN_AS_500;
}

/** What a completed key holds, read back: the work's result, or its recorded failure. */
export type RecordedResult = { kind: 'succeeded'; value: unknown } | { kind: 'failed'; error: string };

/** What is kept of a result: its JSON (`null` for none), so that a later call gets it back. */
export function resultRecord(value: unknown): StoredResponse {
  return {
    status: RECORDED_VALUE,
    headers: [],
    body: Buffer.from(JSON.stringify(value === undefined ? null : value) ?? 'null'),
  };
}

/** What is kept of a failure that is recorded: the error's message and the attempts made. */
export function failureRecord(error: unknown, attempts: number): StoredResponse {
  const message = (error as { message?: unknown })?.message;
  return {
    status: RECORDED_FAILURE,
    headers: [],
    body: Buffer.from(JSON.stringify({ error: typeof message === 'string' ? message : String(error), attempts })),
  };
}

/** A completed key's recorded result, of either form (a result code, or an HTTP-like status of rows written before). */
export function recordedResult(stored: StoredResponse): RecordedResult {
  const recorded = JSON.parse(stored.body.toString('utf8') || 'null') as unknown;
  if (isRecordedFailure(stored.status))
    return { kind: 'failed', error: String((recorded as { error?: unknown } | null)?.error ?? 'failed') };
  return { kind: 'succeeded', value: recorded };
}
