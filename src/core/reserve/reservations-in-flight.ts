import type { ScopedKey } from '../../key/scoped-key.js';
import type { IdempotentRequest } from '../../key/idempotent-request.js';
import type { Refusal, Reservation } from './reservation.js';

/**
 * What a reservation in flight tells the requests that waited on it: its refusal and for which
 * fingerprint (`refused`); that it took the key (`held`: the replay cache now knows); or nothing
 * (`unknown`: it failed, or it took longer than `WAIT_LIMIT_MS`).
 */
export type InFlightAnswer =
  { kind: 'refused'; fingerprint: Buffer; refusal: Refusal } | { kind: 'held' } | { kind: 'unknown' };

/** How long a request waits on another's reservation of its key before it sends its own. */
export const WAIT_LIMIT_MS = 1_000;

const HELD: InFlightAnswer = { kind: 'held' };
const UNKNOWN: InFlightAnswer = { kind: 'unknown' };

interface Entry {
  readonly answer: Promise<InFlightAnswer>;
  readonly end: (answer: InFlightAnswer) => void;
  timer?: NodeJS.Timeout;
}

/**
 * This instance's reservations in flight, one per scoped key. A request whose key is being
 * reserved here waits for that reservation instead of sending its own, then reads what it
 * learned: a duplicate storm costs PostgreSQL one reservation per instance at a time, not one per
 * request. A reservation leaves the table when it settles or passes `WAIT_LIMIT_MS` (a stuck
 * connection never holds its key's other requests).
 */
export class ReservationsInFlight {
  private readonly entries = new Map<string, Entry>();

  /** The answer of the reservation in flight for `scope`, if there is one; it never rejects. */
  of(scope: ScopedKey): Promise<InFlightAnswer> | undefined {
    const entry = this.entries.get(scope.text);
    if (!entry) return undefined;
    entry.timer ??= setTimeout(() => entry.end(UNKNOWN), WAIT_LIMIT_MS).unref();
    return entry.answer;
  }

  /** Runs `reserve` as the reservation in flight for the request's scope until it settles. */
  async lead(request: IdempotentRequest, reserve: () => Promise<Reservation>): Promise<Reservation> {
    const id = request.scope.text;
    let settle!: (answer: InFlightAnswer) => void;
    const entry: Entry = {
      answer: new Promise((resolve) => (settle = resolve)),
      end: (answer) => {
        clearTimeout(entry.timer);
        // Out of the table before anyone wakes: a waiter that asks again meets a newer reservation or none.
        if (this.entries.get(id) === entry) this.entries.delete(id);
        settle(answer);
      },
    };
    this.entries.set(id, entry);
    try {
      const found = await reserve();
      entry.end(found.kind === 'held' ? HELD : { kind: 'refused', fingerprint: request.fingerprint, refusal: found });
      return found;
    } catch (error) {
      entry.end(UNKNOWN);
      throw error;
    }
  }
}

/** The answer a waiting request takes from a reservation in flight: a refusal for its own payload only. */
export function sharedRefusal(answer: InFlightAnswer, fingerprint: Buffer): Refusal | undefined {
  return answer.kind === 'refused' && answer.fingerprint.equals(fingerprint) ? answer.refusal : undefined;
}
