import type { OutgoingHttpHeaders } from 'node:http';
import type { Tombstone } from '../../core/run-outcome.js';
import { KEY_EXPIRES_HEADER, REPLAYED_HEADER } from '../../idempotency.constants.js';
import { redact, type Redaction } from '../../store/redaction.js';
import type { StoredResponse } from '../../store/stored-response.js';
import { PROBLEM_CONTENT_TYPE, type ProblemDetails, ProblemType, tombstoneMembers } from '../problems/problems.js';
import type { CapturedResponse, ResponseReplacement } from './response-capture.js';

/**
 * The part of a captured response that is stored: only allow-listed headers, never Set-Cookie,
 * and nothing the route redacts.
 */
export function toStoredResponse(
  captured: CapturedResponse,
  allowed: ReadonlySet<string>,
  redaction?: Redaction,
): StoredResponse {
  const stored = { status: captured.status, headers: pickHeaders(captured.headers, allowed), body: captured.body };
  return redaction ? redact(stored, redaction) : stored;
}

/** The replay of a stored outcome, marked `Idempotent-Replayed: true`. */
export function replayOf(stored: StoredResponse, allowed: ReadonlySet<string>): ResponseReplacement {
  return {
    status: stored.status,
    headers: [...stored.headers, [REPLAYED_HEADER, 'true']],
    body: stored.body,
    drop: dropped(allowed),
  };
}

/** The key's expiry as the `Idempotency-Key-Expires` value: an HTTP-date, in whole seconds (rounded down). */
export function keyExpiresValue(expiresAt: number | Date): string {
  return new Date(expiresAt).toUTCString();
}

/** `Idempotency-Key-Expires` of a tombstone, for a route whose answers carry it. */
export function expiryHeaders(tombstone: Tombstone, route: { expiryHeader: boolean }): Record<string, string> {
  return route.expiryHeader ? { [KEY_EXPIRES_HEADER]: keyExpiresValue(tombstone.expiresAt) } : {};
}

/**
 * A named caller's route (a webhook provider's) answers its tombstone 200, as a provider takes
 * any other status for a failed delivery: what the tombstone tells, as JSON.
 */
export function tombstoneAcknowledgement(
  tombstone: Tombstone,
  route: { expiryHeader: boolean },
  allowed: ReadonlySet<string>,
): ResponseReplacement {
  const body = { type: ProblemType.KeyExpired, ...tombstoneMembers(tombstone) };
  return {
    status: 200,
    headers: [['content-type', 'application/json; charset=utf-8'], ...Object.entries(expiryHeaders(tombstone, route))],
    body: Buffer.from(JSON.stringify(body)),
    drop: dropped(allowed),
  };
}

/** The replay headers as the list a replacement drops, computed once per set. */
const DROPPED = new WeakMap<ReadonlySet<string>, readonly string[]>();
function dropped(allowed: ReadonlySet<string>): readonly string[] {
  let names = DROPPED.get(allowed);
  if (!names) DROPPED.set(allowed, (names = [...allowed]));
  return names;
}

/** A problem response sent in place of what the app produced (e.g. when recording failed). */
export function problemReplacement(
  problem: ProblemDetails,
  allowed: ReadonlySet<string>,
  headers: Record<string, string> = {},
): ResponseReplacement {
  return {
    status: problem.status,
    headers: [['content-type', PROBLEM_CONTENT_TYPE], ...Object.entries(headers)],
    body: Buffer.from(JSON.stringify(problem)),
    drop: [...allowed],
    withdraw: true,
  };
}

function pickHeaders(headers: OutgoingHttpHeaders, allowed: ReadonlySet<string>): [string, string][] {
  const picked: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || lower === 'set-cookie' || !allowed.has(lower)) continue;
    for (const item of Array.isArray(value) ? value : [value]) picked.push([lower, String(item)]);
  }
  return picked;
}
