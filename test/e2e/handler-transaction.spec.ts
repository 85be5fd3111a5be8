import { BadRequestException, Controller, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Observable, of, timeout } from 'rxjs';
import { DataSource, type EntityManager, type EntitySubscriberInterface } from 'typeorm';
import { IdempotencyManager, IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { appsOn, HTTP_PLATFORMS, PLATFORMS_AND_HOSTS, type RunningApp } from '../support/apps.js';
import { keyLockHolders, keyRows, paymentCount, sql, until } from '../support/database.js';
import { entered, hold, release } from '../support/latch.js';
import { newCaller, newKey, send } from '../support/http.js';

// What a handler may and may not do with the key's transaction, and what happens to its writes
// when its answer is not recorded.

const pay = (manager: EntityManager, request: AuthenticatedRequest) =>
  manager.save(manager.create(Payment, { caller: request.user.id, amount: 1, currency: 'EUR' }));

const jobResults: string[] = [];
/** The nested unit of work of each caller's parallel-fail, to wait for its end. */
const nestedUnits = new Map<string, Promise<unknown>>();
let jobTimer: NodeJS.Timeout | undefined;

@Controller('handler-tx')
@UseGuards(BearerAuthGuard)
class HandlerTransactionController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('own-commit')
  @Idempotent()
  async ownCommit(@IdempotencyManager() manager: EntityManager, @Req() request: AuthenticatedRequest): Promise<object> {
    await pay(manager, request);
    await manager.queryRunner!.commitTransaction();
    await sleep(500);
    return { ok: true };
  }

  @Post('own-release')
  @Idempotent()
  async ownRelease(
    @IdempotencyManager() manager: EntityManager,
    @Req() request: AuthenticatedRequest,
  ): Promise<object> {
    try {
      await pay(manager, request);
    } finally {
      await manager.queryRunner!.release();
    }
    return { ok: true };
  }

  @Post('nested')
  @Idempotent()
  async nested(@Req() request: AuthenticatedRequest): Promise<object> {
    await this.tx.manager.transaction((inner) => pay(inner, request));
    await this.tx.manager
      .transaction(async (inner) => {
        await pay(inner, request);
        throw new Error('the inner unit of work fails');
      })
      .catch(() => undefined);
    return { ok: true };
  }

  @Post('serializable')
  @Idempotent()
  serializable(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.tx.manager.transaction('SERIALIZABLE', (inner) => pay(inner, request));
  }

  @Post('accepted')
  @Idempotent({ storeResponse: (status) => status !== 202 && status < 500 })
  @HttpCode(202)
  accepted(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return pay(this.tx.manager, request);
  }

  @Post('plain')
  @Idempotent()
  plain(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return pay(this.tx.manager, request);
  }

  @Post('deferred-violation')
  @Idempotent()
  async deferredViolation(@Req() request: AuthenticatedRequest): Promise<object> {
    await pay(this.tx.manager, request);
    await this.tx.manager.query(
      'CREATE TEMP TABLE handler_tx_seats (seat int UNIQUE DEFERRABLE INITIALLY DEFERRED) ON COMMIT DROP',
    );
    await this.tx.manager.query('INSERT INTO handler_tx_seats VALUES (1), (1)');
    return { booked: true };
  }

  /** Writes, holds until the test releases the caller's latch, then fails. */
  @Post('held-then-fail')
  @Idempotent()
  async heldThenFail(@Req() request: AuthenticatedRequest): Promise<never> {
    await pay(this.tx.manager, request);
    await hold(request.user.id);
    throw new Error('the card network failed after the write');
  }

  @Post('parallel-fail')
  @Idempotent()
  async parallelFail(@Req() request: AuthenticatedRequest): Promise<object> {
    // A nested unit of work still running (held after its write, until the test releases the
    // caller's latch) when a sibling fails.
    const caller = request.user.id;
    const nested = this.tx.manager.transaction(async (inner) => {
      await pay(inner, request);
      await hold(caller);
    });
    nestedUnits.set(caller, nested);
    await Promise.all([nested, entered(caller).then(() => Promise.reject(new Error('the fraud check failed')))]);
    return {};
  }

  @Post('accepted-open-savepoint')
  @Idempotent({ storeResponse: (status) => status !== 202 && status < 500 })
  @HttpCode(202)
  async acceptedOpenSavepoint(@Req() request: AuthenticatedRequest): Promise<object> {
    // A nested transaction opened with the QueryRunner API and never ended.
    await this.tx.manager.queryRunner!.startTransaction();
    await pay(this.tx.manager, request);
    return {};
  }

  @Post('accepted-after-failed-statement')
  @Idempotent({ storeResponse: (status) => status !== 202 && status < 500 })
  @HttpCode(202)
  async acceptedAfterFailedStatement(@Req() request: AuthenticatedRequest): Promise<object> {
    await pay(this.tx.manager, request);
    // A failed statement aborts the transaction; the handler goes on as if nothing happened.
    await this.tx.manager.query('SELECT 1 / 0').catch(() => undefined);
    return {};
  }

  @Post('stored-open-savepoint')
  @Idempotent()
  async storedOpenSavepoint(@Req() request: AuthenticatedRequest): Promise<object> {
    await this.tx.manager.queryRunner!.startTransaction();
    await pay(this.tx.manager, request);
    return { ok: true };
  }

  @Post('refused-open-savepoint')
  @Idempotent()
  async refusedOpenSavepoint(@Req() request: AuthenticatedRequest): Promise<object> {
    await this.tx.manager.queryRunner!.startTransaction();
    await pay(this.tx.manager, request);
    throw new BadRequestException('the payee is unknown');
  }

  @Post('start-job')
  @Idempotent()
  startJob(): object {
    jobTimer ??= setInterval(() => {
      jobResults.push(this.tx.isActive ? 'inside a transaction' : 'outside');
      this.tx.manager.query('SELECT 1').then(
        () => jobResults.push('ok'),
        (error: Error) => jobResults.push(error.name),
      );
    }, 50);
    return { ok: true };
  }
}

/** An outer interceptor that answers on its own after 200 ms, and lets the handler go on. */
const earlyFallback = {
  intercept: (_context: unknown, next: { handle(): Observable<unknown> }) =>
    next.handle().pipe(timeout({ first: 200, with: () => of({ accepted: true }) })),
};

describe.each(PLATFORMS_AND_HOSTS)('the handler and the key transaction, on %s (%s)', (platform, host) => {
  const { startLab } = appsOn(platform, host);
  let lab: RunningApp;
  let other: RunningApp;
  beforeAll(async () => {
    lab = await startLab({}, { controllers: [HandlerTransactionController] });
    other = await startLab({}, { controllers: [HandlerTransactionController] });
  });
  afterAll(async () => {
    clearInterval(jobTimer);
    jobTimer = undefined;
    await lab.close();
    await other.close();
  });

  it('a handler committing the key transaction itself is refused: nothing commits, the key stays free', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const first = await send(`${lab.url}/handler-tx/own-commit`, { key, caller });
    expect(first.status).toBe(500);
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
    // Another instance sees the key free, not held by a transaction the handler let go of.
    expect((await send(`${other.url}/handler-tx/plain`, { key: newKey(), caller })).status).toBe(201);
  });

  it('a handler releasing the key transaction is refused: its write rolls back, no 201 is recorded for it', async () => {
    const caller = newCaller();
    const first = await send(`${lab.url}/handler-tx/own-release`, { key: newKey(), caller });
    expect(first.status).toBe(500);
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
    // The connection went back to the pool clean: the next request commits as usual.
    const next = await send(`${lab.url}/handler-tx/plain`, { key: newKey(), caller });
    expect(next.status).toBe(201);
    expect(await paymentCount(caller)).toBe(1);
  });

  it('nested manager.transaction() calls still commit and roll back their own savepoints', async () => {
    const caller = newCaller();
    expect((await send(`${lab.url}/handler-tx/nested`, { key: newKey(), caller })).status).toBe(201);
    expect(await paymentCount(caller)).toBe(1);
  });

  it('a nested transaction asking for SERIALIZABLE is refused instead of running at READ COMMITTED', async () => {
    const caller = newCaller();
    const answer = await send(`${lab.url}/handler-tx/serializable`, { key: newKey(), caller });
    expect(answer.status).toBe(500);
    expect(await paymentCount(caller)).toBe(0);
  });

  it('a success the route does not store keeps its writes, and frees the key', async () => {
    const caller = newCaller();
    const answer = await send(`${lab.url}/handler-tx/accepted`, { key: newKey(), caller });
    expect(answer.status).toBe(202);
    expect(typeof answer.json.id).toBe('string');
    expect(await paymentCount(caller)).toBe(1);
    expect(await keyRows(caller)).toEqual([]);
  });

  it('a TypeORM subscriber failing after the commit leaves the recorded outcome standing', async () => {
    const dataSource = lab.app.get(DataSource);
    const failing: EntitySubscriberInterface = {
      afterTransactionCommit: () => {
        throw new Error('event bus down');
      },
    };
    dataSource.subscribers.push(failing);
    try {
      const [caller, key] = [newCaller(), newKey()];
      const first = await send(`${lab.url}/handler-tx/plain`, { key, caller });
      expect(first.status).toBe(201);
      expect(await paymentCount(caller)).toBe(1);
      expect((await keyRows(caller)).map((row) => row.status)).toEqual([201]);
    } finally {
      dataSource.subscribers.splice(dataSource.subscribers.indexOf(failing), 1);
    }
  });

  it('a constraint checked at COMMIT is a 500 outcome-not-recorded, not a 503 to retry', async () => {
    const caller = newCaller();
    const answer = await send(`${lab.url}/handler-tx/deferred-violation`, { key: newKey(), caller });
    expect(answer.status).toBe(500);
    expect(answer.json.type).toBe('urn:nestjs-pg-idempotency:outcome-not-recorded');
    expect(answer.headers['retry-after']).toBeUndefined();
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
  });

  it('a failed handler that left a nested transaction open frees its key: the whole transaction rolls back', async () => {
    const [caller, key] = [newCaller(), newKey()];
    expect((await send(`${lab.url}/handler-tx/parallel-fail`, { key, caller })).status).toBe(500);
    release(caller);
    await nestedUnits.get(caller)!.catch(() => undefined);
    expect(await paymentCount(caller)).toBe(0);
    const [{ n }] = await sql<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE state = 'idle in transaction' AND datname = current_database()`,
    );
    expect(Number(n)).toBe(0);
    expect((await send(`${other.url}/handler-tx/parallel-fail`, { key, caller })).status).toBe(500);
  });

  it('a success the route does not store, with a nested transaction left open, commits the whole transaction', async () => {
    const caller = newCaller();
    expect((await send(`${lab.url}/handler-tx/accepted-open-savepoint`, { key: newKey(), caller })).status).toBe(202);
    expect(await paymentCount(caller)).toBe(1);
  });

  it('a success the route does not store, after a statement failed in the transaction, is a 500 outcome-not-recorded: nothing was kept', async () => {
    const caller = newCaller();
    const answer = await send(`${lab.url}/handler-tx/accepted-after-failed-statement`, { key: newKey(), caller });
    expect(answer.status).toBe(500);
    expect(answer.json.type).toMatch(/outcome-not-recorded$/);
    expect(answer.json.detail).toMatch(/nothing was kept/);
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
  });

  it('a recorded success with a nested transaction left open commits the whole transaction: the write, the key row, the replay', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const first = await send(`${lab.url}/handler-tx/stored-open-savepoint`, { key, caller });
    expect(first.status).toBe(201);
    expect(await paymentCount(caller)).toBe(1);
    expect(await keyRows(caller)).toEqual([expect.objectContaining({ state: 'completed', status: 201 })]);
    const replay = await send(`${lab.url}/handler-tx/stored-open-savepoint`, { key, caller });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await paymentCount(caller)).toBe(1);
  });

  it('a recorded 400 with a nested transaction left open rolls its write back and records the 400', async () => {
    const caller = newCaller();
    expect((await send(`${lab.url}/handler-tx/refused-open-savepoint`, { key: newKey(), caller })).status).toBe(400);
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([expect.objectContaining({ state: 'completed', status: 400 })]);
  });

  it('code the handler left running finds no transaction once the request is over', async () => {
    jobResults.length = 0;
    expect((await send(`${lab.url}/handler-tx/start-job`, { key: newKey() })).status).toBe(201);
    await until(async () => jobResults.length >= 6, 'the job to run a few times');
    clearInterval(jobTimer);
    jobTimer = undefined;
    // Each run notes where it ran, then how its query ended: the runs in flight are waited for.
    const ran = () => jobResults.filter((result) => result === 'outside' || result === 'inside a transaction').length;
    await until(async () => ran() * 2 === jobResults.length, 'the runs in flight to end');
    expect(jobResults.length).toBeGreaterThan(0);
    expect(new Set(jobResults)).toEqual(new Set(['outside', 'ok']));
  });
});

describe.each(HTTP_PLATFORMS)('an answer sent early by an outer interceptor, on %s', (platform) => {
  const { startLab } = appsOn(platform);
  let lab: RunningApp;
  beforeAll(async () => {
    lab = await startLab(
      {},
      { controllers: [HandlerTransactionController], configure: (app) => app.useGlobalInterceptors(earlyFallback) },
    );
  });
  afterAll(() => lab.close());

  it('then the handler fails: its writes roll back and the key is released, the early answer is not recorded', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const first = await send(`${lab.url}/handler-tx/held-then-fail`, { key, caller, body: {} });
    expect(first.status).toBe(201);
    expect(first.json).toEqual({ accepted: true });
    release(caller);
    await until(
      async () => (await keyLockHolders(key, caller, 'POST /handler-tx/held-then-fail')) === 0,
      "the handler's transaction ended",
    );
    expect(await paymentCount(caller)).toBe(0);
    expect(await keyRows(caller)).toEqual([]);
  });
});
