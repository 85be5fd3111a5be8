import { Controller, Headers, Post, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { AttemptCounter } from '../support/common-routes.controller.js';
import { hold } from '../support/latch.js';

/** The latch a lease-mode route's execution of `key` holds on: one per attempt (1 for the first). */
export const attemptLatch = (key: string, attempt: number): string => `${key} attempt ${attempt}`;

/** Lease-mode routes with a 1 s lease: a failing holder, a renewed one, derived downstream keys. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class LeaseModeController {
  private readonly attempts = new AttemptCounter();

  constructor(private readonly tx: IdempotencyTransaction) {}

  /**
   * Lease mode, 1 s lease (not renewed): each attempt holds until the test releases its latch
   * (`attemptLatch`); the first attempt of a key then fails, the next succeeds. A retry sent after
   * 1 s takes the key over while the first still runs.
   */
  @Post('lease-flaky')
  @Idempotent({ mode: 'lease', lease: '1s', renewLease: false })
  async leaseFlaky(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = this.attempts.next(key);
    await hold(attemptLatch(key, attempt));
    if (attempt === 1) throw new Error('the provider call failed');
    return { attempt };
  }

  /** Lease mode, 1 s lease (renewed): holds until the test releases the key's latch; counts its runs per key. */
  @Post('lease-slow')
  @Idempotent({ mode: 'lease', lease: '1s' })
  async leaseSlow(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = this.attempts.next(key);
    await hold(key);
    return { attempt };
  }

  /** Lease mode: answers with this request's derived downstream keys. */
  @Post('lease-keys')
  @Idempotent({ mode: 'lease' })
  leaseKeys(): object {
    return {
      charge: this.tx.downstreamKey('charge'),
      email: this.tx.downstreamKey('email'),
      inTransaction: this.tx.isActive,
    };
  }
}
