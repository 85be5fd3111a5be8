import { scopeKey } from '../../src/key/scoped-key.js';
import type { IdempotentRequest } from '../../src/key/idempotent-request.js';
import type { Reservation } from '../../src/core/reserve/reservation.js';
import { ReservationsInFlight, sharedRefusal, WAIT_LIMIT_MS } from '../../src/core/reserve/reservations-in-flight.js';

const scope = scopeKey('key-1', 'alice', 'POST /payments');
const request = (fingerprint: number): IdempotentRequest => ({
  scope,
  fingerprint: Buffer.alloc(32, fingerprint),
  ttlMs: 60_000,
});

/** A reservation the test settles by hand. */
function pending(): { promise: Promise<Reservation>; resolve: (r: Reservation) => void; reject: (e: Error) => void } {
  let resolve!: (r: Reservation) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<Reservation>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A reservation led by request(1), settled by hand, and a request waiting on it. */
function ledAndWaitedOn() {
  const inFlight = new ReservationsInFlight();
  const reservation = pending();
  const leading = inFlight.lead(request(1), () => reservation.promise);
  return { inFlight, reservation, leading, waiting: inFlight.of(scope)! };
}

describe('ReservationsInFlight', () => {
  it('a waiter takes the refusal of the reservation in flight for its own payload only', async () => {
    const { reservation, leading, waiting } = ledAndWaitedOn();
    reservation.resolve({ kind: 'in-progress', retryAfterSeconds: 3 });
    expect(await leading).toEqual({ kind: 'in-progress', retryAfterSeconds: 3 });
    const answer = await waiting;
    expect(sharedRefusal(answer, request(1).fingerprint)).toEqual({ kind: 'in-progress', retryAfterSeconds: 3 });
    expect(sharedRefusal(answer, request(2).fingerprint)).toBeUndefined();
  });

  it('a reservation that took the key shares nothing (the replay cache knows it is held here)', async () => {
    const { reservation, leading, waiting } = ledAndWaitedOn();
    reservation.resolve({ kind: 'held', hold: {} as never });
    await leading;
    const answer = await waiting;
    expect(answer).toEqual({ kind: 'held' });
    expect(sharedRefusal(answer, request(1).fingerprint)).toBeUndefined();
  });

  it('a failed reservation rejects its own request and tells its waiters nothing', async () => {
    const { reservation, leading, waiting } = ledAndWaitedOn();
    reservation.reject(new Error('connection lost'));
    await expect(leading).rejects.toThrow('connection lost');
    expect(await waiting).toEqual({ kind: 'unknown' });
  });

  it('leaves the table before its waiters wake: a waiter that asks again meets no reservation, or a newer one', async () => {
    const { inFlight, reservation, leading, waiting } = ledAndWaitedOn();
    const seenOnWaking = waiting.then(() => inFlight.of(scope));
    reservation.resolve({ kind: 'mismatch' });
    await leading;
    expect(await seenOnWaking).toBeUndefined();
  });

  it(`a reservation that does not settle within ${WAIT_LIMIT_MS} ms is waited on no longer, and the next request leads its own`, async () => {
    const inFlight = new ReservationsInFlight();
    const stuck = pending();
    void inFlight.lead(request(1), () => stuck.promise);
    const started = Date.now();
    expect(await inFlight.of(scope)!).toEqual({ kind: 'unknown' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_LIMIT_MS - 20);
    expect(inFlight.of(scope)).toBeUndefined();

    const next = pending();
    const leading = inFlight.lead(request(1), () => next.promise);
    const waiting = inFlight.of(scope)!;
    // The stuck reservation settling late changes nothing for the newer one.
    stuck.resolve({ kind: 'mismatch' });
    next.resolve({ kind: 'in-progress' });
    await leading;
    expect(sharedRefusal(await waiting, request(1).fingerprint)).toEqual({ kind: 'in-progress' });
  });
});
