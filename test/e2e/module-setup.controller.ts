import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { IdempotencyManager, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';

/** A handler that takes the key's EntityManager as a parameter (@IdempotencyManager()). */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class ModuleSetupController {
  /** Writes through the injected EntityManager, then fails when asked to. */
  @Post('manager')
  @Idempotent()
  async viaManager(
    @IdempotencyManager() manager: EntityManager,
    @Req() request: AuthenticatedRequest,
    @Body() body: { fail?: boolean },
  ): Promise<Payment> {
    const payment = await manager.save(
      manager.create(Payment, { caller: request.user.id, amount: 5, currency: 'EUR' }),
    );
    if (body.fail) throw new Error('failed after writing through the injected manager');
    return payment;
  }
}
