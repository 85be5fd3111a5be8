import type { StoredResponse } from '../response/stored-response.js';
import type { MessageOutcome } from './message-outcome.js';

/** The status a message's recorded reply carries: it ran and its reply is kept. */
const REPLIED = 200;
/** The status of a message recorded as failed (its last attempt failed). */
const FAILED = 500;

const JSON_HEADERS: [string, string][] = [['content-type', 'application/json']];

/** What is kept of a handler's reply: its JSON (`null` for none), so that a duplicate answers it. */
export function replyRecord(reply: unknown): StoredResponse {
  return { status: REPLIED, headers: JSON_HEADERS, body: Buffer.from(JSON.stringify(reply === undefined ? null : reply) ?? 'null') };
}

/** What is kept of a message whose last attempt failed: the error's message and the attempts made. */
export function failureRecord(error: unknown, attempts: number): StoredResponse {
  const message = (error as { message?: unknown })?.message;
  return { status: FAILED, headers: JSON_HEADERS, body: Buffer.from(JSON.stringify({ error: typeof message === 'string' ? message : String(error), attempts })) };
}

/** A completed key's recorded outcome, for a duplicate. */
export function recordedOutcome(stored: StoredResponse): MessageOutcome {
  const recorded = JSON.parse(stored.body.toString('utf8') || 'null') as unknown;
  if (stored.status === FAILED) return { kind: 'failed-before', error: String((recorded as { error?: unknown } | null)?.error ?? 'failed') };
  return { kind: 'duplicate', reply: recorded };
}
