import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyTransaction } from '../../tools/typeorm/idempotency-transaction.js';
import { DEMO_CONFIG, type DemoConfig } from '../demo.config.js';

/**
 * Stands in for an external card processor: it applies a refund at most once per idempotency
 * key (its own ledger, `demo_provider_refunds`, counts every call), then answers after
 * `DEMO_PROVIDER_LATENCY_MS`: the refund is done before the answer arrives, the dangerous case
 * for a caller that crashes in between.
 */
@Injectable()
export class SimulatedPaymentProvider {
  constructor(
    private readonly tx: IdempotencyTransaction,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  async refund(request: { idempotencyKey: string; paymentId: string; amount: number }): Promise<{ id: string }> {
    const [effect]: Array<{ id: string }> = await this.tx.manager.query(
      `INSERT INTO demo_provider_refunds (idempotency_key, payment_id, amount) VALUES ($1, $2, $3)
       ON CONFLICT (idempotency_key) DO UPDATE SET calls = demo_provider_refunds.calls + 1
       RETURNING id`,
      [request.idempotencyKey, request.paymentId, request.amount],
    );
    if (this.config.providerLatencyMs > 0) await sleep(this.config.providerLatencyMs);
    return effect;
  }
}
