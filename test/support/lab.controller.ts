import {
  BadRequestException,
  Body,
  Controller,
  Header,
  Headers,
  HttpCode,
  HttpException,
  Patch,
  Param,
  Post,
  Req,
  Res,
  StreamableFile,
  UnprocessableEntityException,
  UseGuards,
} from '@nestjs/common';
import { Exclude } from 'class-transformer';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { from, interval, map, type Observable, of, switchMap } from 'rxjs';
import type { EntityManager } from 'typeorm';
import { Idempotent, IdempotencyManager, IdempotencyTransaction } from '../../src/index.js';
import { BearerAuthGuard, type AuthenticatedRequest } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';

/** What Express's `Response` and Fastify's `FastifyReply` share: `header(name, value)`. */
export interface HeaderSetter {
  header(name: string, value: string): unknown;
}

/** An Express response or a Fastify reply, as far as a handler that answers by itself needs. */
export interface SelfSender {
  status?(code: number): { json(body: unknown): unknown };
  json?: unknown;
  code?(code: number): { send(body: unknown): unknown };
  send?: unknown;
}

/** Sends `body` with `status` through the platform's own response (Express) or reply (Fastify). */
function sendItself(response: SelfSender, status: number, body: unknown): void {
  if (response.json) response.status!(status).json(body);
  else response.code!(status).send!(body);
}

export class Account {
  id!: number;
  name!: string;
  @Exclude() password!: string;

  constructor(fields: Account) {
    Object.assign(this, fields);
  }
}

/** Routes that exercise one behaviour each; every business write is a row in `payments`. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class LabController {
  private readonly attempts = new Map<string, number>();

  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('fail-after-write')
  @Idempotent()
  async failAfterWrite(@Req() request: AuthenticatedRequest): Promise<never> {
    await this.write(request);
    throw new Error('the card processor is down');
  }

  /** Fails after writing with an upstream's 401 the way HTTP clients report it (an Error with a `status`). */
  @Post('upstream-refused')
  @Idempotent()
  async upstreamRefused(@Req() request: AuthenticatedRequest): Promise<never> {
    await this.write(request);
    throw Object.assign(new Error('Request failed with status code 401'), { status: 401, code: 'ERR_BAD_REQUEST' });
  }

  /** Fails after writing on the first attempt of a key, succeeds on the next. */
  @Post('flaky')
  @Idempotent()
  async flaky(@Req() request: AuthenticatedRequest, @Headers('idempotency-key') key: string): Promise<object> {
    const payment = await this.write(request);
    const attempt = this.nextAttempt(key);
    if (attempt === 1) throw new Error('transient failure after the write');
    return { attempt, paymentId: payment.id };
  }

  @Post('reject-after-write')
  @Idempotent()
  async rejectAfterWrite(@Req() request: AuthenticatedRequest): Promise<never> {
    await this.write(request);
    throw new UnprocessableEntityException('insufficient funds');
  }

  /** A statement that fails (aborting the transaction), caught, then a thrown 400. */
  @Post('sql-error-then-400')
  @Idempotent()
  async sqlErrorThen400(@Req() request: AuthenticatedRequest): Promise<never> {
    await this.write(request);
    await this.tx.manager.query('SELECT 1/0').catch(() => undefined);
    throw new BadRequestException('bad input found by the database');
  }

  /** A 422 thrown inside a nested `manager.transaction()`, after writes inside and outside it. */
  @Post('nested-reject')
  @Idempotent()
  async nestedReject(@Req() request: AuthenticatedRequest): Promise<never> {
    await this.write(request);
    await this.tx.manager.transaction(async (inner) => {
      await inner.save(inner.create(Payment, { caller: request.user.id, amount: 2, currency: 'EUR' }));
      throw new UnprocessableEntityException('declined inside');
    });
    throw new Error('unreachable');
  }

  /** Passes its headers to `writeHead()` as a flat list, naming `Link` twice (as a platform may). */
  @Post('write-head-list')
  @Idempotent()
  writeHeadList(@Res({ passthrough: true }) response: { raw?: ServerResponse } & ServerResponse): void {
    const raw = response.raw ?? response;
    raw.writeHead(201, ['Content-Type', 'application/json', 'Link', '</lab/a>; rel="a"', 'Link', '</lab/b>; rel="b"']);
    raw.end('{"listed":true}');
  }

  @Post('no-content')
  @Idempotent()
  @HttpCode(204)
  noContent(): void {}

  @Post('status/:code')
  @Idempotent()
  async status(@Req() request: AuthenticatedRequest, @Param('code') code: string): Promise<never> {
    await this.write(request);
    throw new HttpException({ failed: Number(code) }, Number(code));
  }

  /** Like status/:code, on a route whose own policy stores only answers below 400. */
  @Post('status-below-400-stored/:code')
  @Idempotent({ storeResponse: (status) => status < 400 })
  async statusBelow400Stored(@Req() request: AuthenticatedRequest, @Param('code') code: string): Promise<never> {
    return this.status(request, code);
  }

  /** Writes, sends its answer itself (as `@Res({ passthrough: true })` allows), then goes on 100 ms. */
  @Post('self-sent')
  @Idempotent()
  async selfSent(@Req() request: AuthenticatedRequest, @Res({ passthrough: true }) response: SelfSender): Promise<void> {
    const payment = await this.write(request);
    sendItself(response, 201, payment);
    await sleep(100);
  }

  /** Writes, sends its answer on the Node response itself and awaits its end() callback, then writes again. */
  @Post('self-sent-awaited')
  @Idempotent()
  async selfSentAwaited(@Req() request: AuthenticatedRequest, @Res({ passthrough: true }) response: { raw?: ServerResponse } & ServerResponse): Promise<void> {
    const payment = await this.write(request);
    const raw = response.raw ?? response;
    raw.statusCode = 201;
    raw.setHeader('content-type', 'application/json');
    await new Promise<void>((resolve) => raw.end(JSON.stringify(payment), () => resolve()));
    await this.write(request);
  }

  /** Writes, sends 201 itself, then a later step fails (a plain error: its writes roll back). */
  @Post('self-sent-then-fail')
  @Idempotent()
  async selfSentThenFail(@Req() request: AuthenticatedRequest, @Res({ passthrough: true }) response: SelfSender): Promise<void> {
    const payment = await this.write(request);
    sendItself(response, 201, payment);
    await sleep(20);
    throw new Error('a later step of the handler failed');
  }

  /** Sends 200 itself and returns a value, which Nest then tries to send with the route's 201. */
  @Post('self-sent-and-returned')
  @Idempotent()
  async selfSentAndReturned(@Req() request: AuthenticatedRequest, @Res({ passthrough: true }) response: SelfSender): Promise<object> {
    const payment = await this.write(request);
    sendItself(response, 200, payment);
    return { ignored: 'a second answer, after the first was sent' };
  }

  /** A header with two values (`Link`, allow-listed by the replay suites). */
  @Post('links')
  @Idempotent()
  links(@Res({ passthrough: true }) response: { header(name: string, value: string | string[]): unknown }): object {
    response.header('Link', ['</lab/things/42>; rel="self"', '</lab/owners/7>; rel="owner"']);
    return { linked: true };
  }

  @Post('headers')
  @Idempotent()
  @Header('Location', '/lab/things/42')
  @Header('ETag', '"v1"')
  @Header('Cache-Control', 'no-store')
  headers(@Res({ passthrough: true }) response: HeaderSetter): object {
    response.header('X-Trace', 'set-by-the-first-run');
    response.header('X-Replayed-Too', 'configured');
    response.header('Set-Cookie', 'session=secret-of-the-first-caller; Path=/; HttpOnly');
    return { created: 42 };
  }

  @Post('serialized')
  @Idempotent()
  serialized(): Account {
    return new Account({ id: 7, name: 'Ada', password: 'never-leaves' });
  }

  @Post('printable')
  @Idempotent({ keyFormat: 'printable-ascii' })
  printable(@Headers('idempotency-key') key: string): object {
    return { length: key.length };
  }

  @Post('optional')
  @Idempotent({ required: false })
  async optional(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.write(request);
  }

  @Post('short-ttl')
  @Idempotent({ ttl: '1s' })
  async shortTtl(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.write(request);
  }

  @Post('file')
  @Idempotent()
  async file(@Req() request: AuthenticatedRequest): Promise<StreamableFile> {
    await this.write(request);
    return new StreamableFile(Buffer.from('not replayable'));
  }

  /** Any path below /lab/deep/ (a wildcard, so no router parameter-length limit applies). */
  @Post('deep/*')
  @Idempotent()
  deep(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.write(request);
  }

  /** Writes, then emits one value per `count` (1 by default; `0` means endlessly, every 10 ms). */
  @Post('observable')
  @Idempotent()
  observable(@Req() request: AuthenticatedRequest, @Body() body: { count?: number }): Observable<object> {
    const count = body.count ?? 1;
    return from(this.write(request)).pipe(
      switchMap((payment) =>
        count === 0
          ? interval(10).pipe(map((n) => ({ n, paymentId: payment.id })))
          : of(...Array.from({ length: count }, (_, n) => ({ n, paymentId: payment.id }))),
      ),
    );
  }

  /** Writes, then answers with a body of about `size` bytes; stores up to 4 KiB. */
  @Post('large')
  @Idempotent({ maxResponseBytes: 4096 })
  large(@Req() request: AuthenticatedRequest, @Body() body: { size: number }): Promise<object> {
    return this.sized(request, body.size);
  }

  /** The same under the module's maxResponseBytes. */
  @Post('large-default')
  @Idempotent()
  largeDefault(@Req() request: AuthenticatedRequest, @Body() body: { size: number }): Promise<object> {
    return this.sized(request, body.size);
  }

  @Post('scoped')
  @Idempotent()
  postScoped(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.write(request);
  }

  @Patch('scoped')
  @Idempotent()
  patchScoped(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.write(request);
  }

  /** Writes through the injected EntityManager, then fails when asked to. */
  @Post('manager')
  @Idempotent()
  async viaManager(
    @IdempotencyManager() manager: EntityManager,
    @Req() request: AuthenticatedRequest,
    @Body() body: { fail?: boolean },
  ): Promise<Payment> {
    const payment = await manager.save(manager.create(Payment, { caller: request.user.id, amount: 5, currency: 'EUR' }));
    if (body.fail) throw new Error('failed after writing through the injected manager');
    return payment;
  }

  /** Only `amount` is fingerprinted: `note` may change between retries. */
  @Post('narrow')
  @Idempotent({ fingerprint: ['amount'] })
  narrow(@Body() body: { amount: number; note?: string }): object {
    return { amount: body.amount, note: body.note };
  }

  /** Writes, then waits 600 ms (or `X-Work-Ms`) without touching the database, then answers. */
  @Post('slow-write')
  @Idempotent()
  async slowWrite(@Req() request: AuthenticatedRequest, @Headers('x-work-ms') workMs?: string): Promise<Payment> {
    const payment = await this.write(request);
    await sleep(Number(workMs ?? 600));
    return payment;
  }

  /** The same as slow-write in lease mode: the payment commits on its own, before the answer. */
  @Post('lease-slow-write')
  @Idempotent({ mode: 'lease', lease: '1s' })
  async leaseSlowWrite(@Req() request: AuthenticatedRequest, @Headers('x-work-ms') workMs?: string): Promise<Payment> {
    const payment = await this.write(request);
    await sleep(Number(workMs ?? 600));
    return payment;
  }

  /**
   * Lease mode, 1 s lease (not renewed), 2 s of work: the first attempt of a key fails at the end,
   * the next succeeds. A retry sent after 1 s takes the key over while the first still runs.
   */
  @Post('lease-flaky')
  @Idempotent({ mode: 'lease', lease: '1s', renewLease: false })
  async leaseFlaky(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = this.nextAttempt(key);
    await sleep(2_000);
    if (attempt === 1) throw new Error('the provider call failed');
    return { attempt };
  }

  /** Lease mode, 1 s lease (renewed), 2.5 s of work: counts its executions per key. */
  @Post('lease-slow')
  @Idempotent({ mode: 'lease', lease: '1s' })
  async leaseSlow(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = this.nextAttempt(key);
    await sleep(2_500);
    return { attempt };
  }

  /** Lease mode: answers with this request's derived downstream keys. */
  @Post('lease-keys')
  @Idempotent({ mode: 'lease' })
  leaseKeys(): object {
    return { charge: this.tx.downstreamKey('charge'), email: this.tx.downstreamKey('email'), inTransaction: this.tx.isActive };
  }

  /** Wait mode: duplicates wait up to 3 s for the first (600 ms of work) instead of a 409. */
  @Post('waiting')
  @Idempotent({ wait: '3s' })
  async waiting(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payment = await this.write(request);
    await sleep(600);
    return payment;
  }

  /** Wait mode with a bound shorter than the work: duplicates still get 409. */
  @Post('waiting-briefly')
  @Idempotent({ wait: '100ms' })
  async waitingBriefly(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payment = await this.write(request);
    await sleep(600);
    return payment;
  }

  /** Wait mode in lease mode (20 s lease): past the wait, the 409 tells the seconds left on the lease. */
  @Post('waiting-lease')
  @Idempotent({ mode: 'lease', lease: '20s', wait: '300ms' })
  async waitingLease(): Promise<object> {
    await sleep(1_500);
    return { done: true };
  }

  /** Counts the executions of a key's handler on this instance: 1 for the first. */
  private nextAttempt(key: string): number {
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    return attempt;
  }

  /** The baseline: the same write and read as `twin`, in a plain transaction, no idempotency. */
  @Post('plain')
  plain(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.tx.manager.transaction((manager) => this.writeAndRead(manager, request));
  }

  @Post('twin')
  @Idempotent()
  twin(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return this.writeAndRead(this.tx.manager, request);
  }

  /** A nested transaction that fails: only its own write is undone (a savepoint). */
  @Post('nested')
  @Idempotent()
  async nested(@Req() request: AuthenticatedRequest): Promise<object> {
    await this.write(request);
    const failed = await this.tx.manager
      .transaction(async (inner) => {
        await inner.save(inner.create(Payment, { caller: request.user.id, amount: 2, currency: 'EUR' }));
        throw new Error('inner failure');
      })
      .catch((error: Error) => error.message);
    return { failed };
  }

  private async writeAndRead(manager: EntityManager, request: AuthenticatedRequest): Promise<Payment> {
    const saved = await manager.save(manager.create(Payment, { caller: request.user.id, amount: 3, currency: 'EUR' }));
    return manager.findOneByOrFail(Payment, { id: saved.id });
  }

  private async sized(request: AuthenticatedRequest, size: number): Promise<object> {
    const payment = await this.write(request);
    return { paymentId: payment.id, data: 'x'.repeat(Math.max(0, size - 70)) };
  }

  private write(request: AuthenticatedRequest): Promise<Payment> {
    const payments = this.tx.getRepository(Payment);
    return payments.save(payments.create({ caller: request.user.id, amount: 100, currency: 'EUR' }));
  }
}

/** The same route under another version prefix. */
@Controller('v2/lab')
@UseGuards(BearerAuthGuard)
export class LabV2Controller {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('scoped')
  @Idempotent()
  scoped(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payments = this.tx.getRepository(Payment);
    return payments.save(payments.create({ caller: request.user.id, amount: 100, currency: 'EUR' }));
  }
}
