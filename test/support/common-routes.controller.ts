import { Body, Controller, HttpException, Param, Post, Req, UseGuards } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { hold } from './latch.js';

/** The business write of a lab route: one row in `payments` for the caller, in the key's transaction. */
export function writePayment(tx: IdempotencyTransaction, request: AuthenticatedRequest): Promise<Payment> {
  const payments = tx.getRepository(Payment);
  return payments.save(payments.create({ caller: request.user.id, amount: 100, currency: 'EUR' }));
}

/** The write and read of `twin` (and of round-trips' plain baseline) through `manager`. */
export async function writeAndRead(manager: EntityManager, request: AuthenticatedRequest): Promise<Payment> {
  const saved = await manager.save(manager.create(Payment, { caller: request.user.id, amount: 3, currency: 'EUR' }));
  return manager.findOneByOrFail(Payment, { id: saved.id });
}

/** Counts the executions of a key's handler on one controller instance: 1 for the first. */
export class AttemptCounter {
  private readonly attempts = new Map<string, number>();

  next(key: string): number {
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    return attempt;
  }
}

/**
 * The lab routes many specs share: a write (`scoped`), a write and read (`twin`), a write held on
 * a latch, a chosen status, a narrowed fingerprint. Every business write is a row in `payments`.
 * A spec's other routes are in its own fixture beside it (`test/e2e/<spec>.controller.ts`), under
 * the same `lab` prefix. The class name shows in the module's events and metrics
 * (`LabController.twin`).
 */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class LabController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('scoped')
  @Idempotent()
  postScoped(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return writePayment(this.tx, request);
  }

  @Post('twin')
  @Idempotent()
  twin(@Req() request: AuthenticatedRequest): Promise<Payment> {
    return writeAndRead(this.tx.manager, request);
  }

  /**
   * Writes, then holds (its connection and its key's transaction) until the test releases the
   * caller's latch (`release(caller)`, ./latch.ts), then answers.
   */
  @Post('held-write')
  @Idempotent()
  async heldWrite(@Req() request: AuthenticatedRequest): Promise<Payment> {
    const payment = await writePayment(this.tx, request);
    await hold(request.user.id);
    return payment;
  }

  @Post('status/:code')
  @Idempotent()
  async status(@Req() request: AuthenticatedRequest, @Param('code') code: string): Promise<never> {
    await writePayment(this.tx, request);
    throw new HttpException({ failed: Number(code) }, Number(code));
  }

  /** Only `amount` is fingerprinted: `note` may change between retries. */
  @Post('narrow')
  @Idempotent({ fingerprint: ['amount'] })
  narrow(@Body() body: { amount: number; note?: string }): object {
    return { amount: body.amount, note: body.note };
  }
}
