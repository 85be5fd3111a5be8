import { Controller, Headers, Post, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Idempotent, IdempotencyTransaction } from '../../src/index.js';
import { BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { AttemptCounter } from '../support/common-routes.controller.js';

/** Lease-mode routes with a 1 s lease: a failing holder, a renewed one, derived downstream keys. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class LeaseModeController {
  private readonly attempts = new AttemptCounter();

  constructor(private readonly tx: IdempotencyTransaction) {}

  /**
   * Lease mode, 1 s lease (not renewed), 2 s of work: the first attempt of a key fails at the end,
   * the next succeeds. A retry sent after 1 s takes the key over while the first still runs.
   */
  @Post('lease-flaky')
  @Idempotent({ mode: 'lease', lease: '1s', renewLease: false })
  async leaseFlaky(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = this.attempts.next(key);
    await sleep(2_000);
    if (attempt === 1) throw new Error('the provider call failed');
    return { attempt };
  }

  /** Lease mode, 1 s lease (renewed), 2.5 s of work: counts its executions per key. */
  @Post('lease-slow')
  @Idempotent({ mode: 'lease', lease: '1s' })
  async leaseSlow(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = this.attempts.next(key);
    await sleep(2_500);
    return { attempt };
  }

  /** Lease mode: answers with this request's derived downstream keys. */
  @Post('lease-keys')
  @Idempotent({ mode: 'lease' })
  leaseKeys(): object {
    return { charge: this.tx.downstreamKey('charge'), email: this.tx.downstreamKey('email'), inTransaction: this.tx.isActive };
  }
}
