import { Controller, Headers, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { writePayment } from '../support/common-routes.controller.js';
import { hold } from '../support/latch.js';
import { type SelfSender, sendItself } from '../support/platform-response.js';

/** The latch both requests of a lock pair hold on between their locks, whichever order they take them in. */
export const lockPairLatch = (first: string, second: string): string => `lock pair ${[first, second].sort().join(' ')}`;

/** A lock pair that deadlocks, a held write in lease mode, and handlers that send their answer themselves before they end. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class DatabaseTroubleController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /**
   * Writes, then takes two transaction-level advisory locks, holding between them until the test
   * releases the pair's latch (`lockPairLatch`): two requests taking the same pair in opposite
   * orders, both released once both hold their first lock, deadlock, and PostgreSQL aborts one of
   * them (40P01).
   */
  @Post('lock-pair')
  @Idempotent()
  async lockPair(
    @Req() request: AuthenticatedRequest,
    @Headers('x-first') first: string,
    @Headers('x-second') second: string,
  ): Promise<Payment> {
    const payment = await writePayment(this.tx, request);
    await this.tx.manager.query('SELECT pg_advisory_xact_lock($1)', [first]);
    await hold(lockPairLatch(first, second));
    await this.tx.manager.query('SELECT pg_advisory_xact_lock($1)', [second]);
    return payment;
  }

  /**
   * LabController's held-write in lease mode: the payment commits on its own, before the answer.
   * The lease is 5 s, so that each of its statements (bounded to a third of it) has time to
   * answer on a loaded machine.
   */
  @Post('lease-held-write')
  @Idempotent({ mode: 'lease', lease: '5s' })
  async leaseHeldWrite(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payment = await writePayment(this.tx, request);
    await hold(request.user.id);
    return payment;
  }

  /** Writes, sends its answer itself (as `@Res({ passthrough: true })` allows), then goes on 100 ms. */
  @Post('self-sent')
  @Idempotent()
  async selfSent(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: SelfSender,
  ): Promise<void> {
    const payment = await writePayment(this.tx, request);
    sendItself(response, 201, payment);
    await sleep(100);
  }

  /** Writes, sends its answer on the Node response itself and awaits its end() callback, then writes again. */
  @Post('self-sent-awaited')
  @Idempotent()
  async selfSentAwaited(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: { raw?: ServerResponse } & ServerResponse,
  ): Promise<void> {
    const payment = await writePayment(this.tx, request);
    const raw = response.raw ?? response;
    raw.statusCode = 201;
    raw.setHeader('content-type', 'application/json');
    await new Promise<void>((resolve) => raw.end(JSON.stringify(payment), () => resolve()));
    await writePayment(this.tx, request);
  }
}
