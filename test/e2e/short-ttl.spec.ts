import { Body, Controller, Headers, Post, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencySweeper, Idempotent } from '../../src/index.js';
import { BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { keyRows, sql, untilPast } from '../support/database.js';
import { appsOn, type RunningApp } from '../support/apps.js';
import { newCaller, newKey, send } from '../support/http.js';
import { entered, hold, release } from '../support/latch.js';

/** Executions per key, across every app instance of this Jest process. */
const runs = new Map<string, number>();
const run = (key: string): number => {
  const n = (runs.get(key) ?? 0) + 1;
  runs.set(key, n);
  return n;
};

/** A handler's work: `x-work-ms` milliseconds, or `held` until the test releases the key's latch. */
const work = (key: string, ms: string): Promise<void> => (ms === 'held' ? hold(key) : sleep(Number(ms)));

@Controller('ttl')
@UseGuards(BearerAuthGuard)
class ShortTtlController {
  /** Lease mode, 30 s lease renewed every 10 s (the default), route ttl 1 s. */
  @Post('lease-ttl-short')
  @Idempotent({ mode: 'lease', lease: '30s', ttl: '1s' })
  async leaseTtlShort(
    @Headers('idempotency-key') key: string,
    @Headers('x-work-ms') ms: string,
    @Body() body: object,
  ): Promise<object> {
    const attempt = run(key);
    await work(key, ms);
    return { attempt, body };
  }

  /** The same route in transactional mode, for comparison. */
  @Post('tx-ttl-short')
  @Idempotent({ ttl: '1s' })
  async txTtlShort(@Headers('idempotency-key') key: string, @Headers('x-work-ms') ms: string): Promise<object> {
    const attempt = run(key);
    await work(key, ms);
    return { attempt };
  }
}

/**
 * Routes whose ttl (1 s) is shorter than their handler or their lease: a key's ttl counts from its
 * recorded outcome, and a lease in progress never expires nor is swept. Express only: nothing here
 * depends on the HTTP platform.
 */
describe('a ttl shorter than the handler or its lease (express)', () => {
  const { startLab } = appsOn('express');
  let a: RunningApp;
  let b: RunningApp;
  beforeAll(async () => {
    a = await startLab({}, { controllers: [ShortTtlController] });
    b = await startLab({}, { controllers: [ShortTtlController] });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('transactional mode: a 1.5 s handler on a 1 s ttl route is replayed right after its 201 (the ttl counts from the recorded outcome)', async () => {
    const caller = newCaller();
    const key = newKey();
    const first = await send(`${a.url}/ttl/tx-ttl-short`, { key, caller, body: {}, headers: { 'x-work-ms': '1500' } });
    expect(first.status).toBe(201);
    const retry = await send(`${b.url}/ttl/tx-ttl-short`, { key, caller, body: {}, headers: { 'x-work-ms': '1500' } });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(runs.get(key)).toBe(1);
  });

  it('lease mode: the same 1.5 s handler on a 1 s ttl route is replayed right after its 201 (outcome kept)', async () => {
    const caller = newCaller();
    const key = newKey();
    const first = await send(`${a.url}/ttl/lease-ttl-short`, {
      key,
      caller,
      body: {},
      headers: { 'x-work-ms': '1500' },
    });
    expect(first.status).toBe(201);
    // The client's connection dropped after the 201, say: it retries at once with the same key.
    const retry = await send(`${b.url}/ttl/lease-ttl-short`, {
      key,
      caller,
      body: {},
      headers: { 'x-work-ms': '1500' },
    });
    expect({ status: retry.status, replayed: retry.headers['idempotent-replayed'], runs: runs.get(key) }).toEqual({
      status: 201,
      replayed: 'true',
      runs: 1,
    });
  });

  it('lease mode: while the holder runs under a live, renewed 30 s lease, a duplicate gets 409 (never a second execution)', async () => {
    const caller = newCaller();
    const key = newKey();
    const holder = send(`${a.url}/ttl/lease-ttl-short`, { key, caller, body: {}, headers: { 'x-work-ms': 'held' } });
    await entered(key);
    await untilPast(caller, 'expires_at'); // past the route's 1 s ttl
    const [{ leased }] = await sql(
      `SELECT locked_until > now() + interval '25 seconds' AS leased FROM idempotency_keys WHERE caller = $1`,
      [caller],
    );
    expect(leased).toBe(true); // the holder's lease runs for about 29 s more
    const duplicate = await send(`${b.url}/ttl/lease-ttl-short`, {
      key,
      caller,
      body: {},
      headers: { 'x-work-ms': '10' },
    });
    release(key);
    const first = await holder;
    expect({ duplicate: duplicate.status, first: first.status, runs: runs.get(key) }).toEqual({
      duplicate: 409,
      first: 201,
      runs: 1,
    });
  });

  it('lease mode: a request with ANOTHER payload during the live lease gets 422, not a run', async () => {
    const caller = newCaller();
    const key = newKey();
    const holder = send(`${a.url}/ttl/lease-ttl-short`, {
      key,
      caller,
      body: { amount: 1 },
      headers: { 'x-work-ms': 'held' },
    });
    await entered(key);
    await untilPast(caller, 'expires_at'); // past the route's 1 s ttl
    const other = await send(`${b.url}/ttl/lease-ttl-short`, {
      key,
      caller,
      body: { amount: 999 },
      headers: { 'x-work-ms': '10' },
    });
    release(key);
    const first = await holder;
    const retryOfFirst = await send(`${b.url}/ttl/lease-ttl-short`, {
      key,
      caller,
      body: { amount: 1 },
      headers: { 'x-work-ms': '10' },
    });
    expect({ other: other.status, first: first.status, retryOfFirst: retryOfFirst.status }).toEqual({
      other: 422,
      first: 201,
      retryOfFirst: 201,
    });
  });

  it('the sweeper never deletes the row of a lease in progress: the holder records its outcome', async () => {
    const caller = newCaller();
    const key = newKey();
    const holder = send(`${a.url}/ttl/lease-ttl-short`, { key, caller, body: {}, headers: { 'x-work-ms': 'held' } });
    await entered(key);
    await untilPast(caller, 'expires_at'); // past the route's 1 s ttl
    await b.app.get(IdempotencySweeper).sweep();
    const rowsAfterSweep = await keyRows(caller);
    release(key);
    const first = await holder;
    // The holder is told "retry to get the recorded outcome"...
    const retry = await send(`${b.url}/ttl/lease-ttl-short`, { key, caller, body: {}, headers: { 'x-work-ms': '10' } });
    expect({
      rowsAfterSweep: rowsAfterSweep.length,
      first: first.status,
      runs: runs.get(key),
      retry: retry.status,
    }).toEqual({
      rowsAfterSweep: 1,
      first: 201,
      runs: 1,
      retry: 201,
    });
  });
});
