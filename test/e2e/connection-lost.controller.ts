import { Controller, Headers, Post, Req, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';

/**
 * A handler between two queries when its connection dies. With `x-await-connection-loss`, it
 * writes, then waits (at most 30 s) until TypeORM has noticed the connection is gone and released
 * the key's QueryRunner, then queries again through the repository it had, or, with
 * `x-write-again`, writes once more through a repository it asks `IdempotencyTransaction` for
 * anew; without either, it writes and answers.
 */
@Controller('connection-lost')
@UseGuards(BearerAuthGuard)
export class ConnectionLostController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent()
  async pay(
    @Req() request: AuthenticatedRequest,
    @Headers('x-await-connection-loss') awaitLoss?: string,
    @Headers('x-write-again') writeAgain?: string,
  ): Promise<Payment> {
    const payments = this.tx.getRepository(Payment);
    const payment = await payments.save(payments.create({ caller: request.user.id, amount: 100, currency: 'EUR' }));
    if (awaitLoss) {
      const runner = this.tx.manager.queryRunner!;
      for (const deadline = Date.now() + 30_000; !runner.isReleased && Date.now() < deadline;) await sleep(10);
      if (writeAgain) {
        const again = this.tx.getRepository(Payment);
        return again.save(again.create({ caller: request.user.id, amount: 200, currency: 'EUR' }));
      }
      await payments.findOneByOrFail({ id: payment.id });
    }
    return payment;
  }
}
