import type { ScopedKey } from '../parse/scoped-key.js';
import type { KeyRequest, Refusal, Reservation } from './reservation.js';

/** What a reservation in flight tells the requests that waited on it: its refusal, and for which fingerprint. */
export interface InFlightAnswer {
  fingerprint: Buffer;
  refusal: Refusal;
}

/**
 * This instance's reservations in flight, one per scoped key. A request whose key is being
 * reserved here waits for that reservation instead of sending its own, then reads what it
 * learned: a duplicate storm costs PostgreSQL one reservation per instance, not one per request.
 * A reservation that takes the key or fails answers nothing (`undefined`): the waiter then asks
 * this instance's replay cache, then PostgreSQL.
 */
export class ReservationsInFlight {
  private readonly answers = new Map<string, Promise<InFlightAnswer | undefined>>();

  /** The answer of the reservation in flight for `scope`, if there is one; it never rejects. */
  of(scope: ScopedKey): Promise<InFlightAnswer | undefined> | undefined {
    return this.answers.get(scope.text);
  }

  /** Runs `reserve` as the reservation in flight for the request's scope until it settles. */
  async lead(request: KeyRequest, reserve: () => Promise<Reservation>): Promise<Reservation> {
    const id = request.scope.text;
    const reservation = reserve();
    const answer = reservation.then(
      (found) => (found.kind === 'held' ? undefined : { fingerprint: request.fingerprint, refusal: found }),
      () => undefined,
    );
    this.answers.set(id, answer);
    try {
      return await reservation;
    } finally {
      if (this.answers.get(id) === answer) this.answers.delete(id);
    }
  }
}

/** The answer a waiting request takes from a reservation in flight: a refusal for its own payload only. */
export function sharedRefusal(answer: InFlightAnswer | undefined, fingerprint: Buffer): Refusal | undefined {
  return answer?.fingerprint.equals(fingerprint) ? answer.refusal : undefined;
}
