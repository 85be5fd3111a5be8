// #region processor
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { IdempotentJob, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { Payment } from './payment.entity.js';
import { PAYMENTS_QUEUE } from './payments.queue.js';

/** A job's data: charge `amount` cents to `customer` for `orderId`. */
export interface ChargeOrder {
  orderId: string;
  customer: string;
  amount: number;
}

// The second argument is BullMQ's WorkerOptions. A job whose worker died waits up to about
// lockDuration + stalledInterval for another worker: 40 s here, a minute on BullMQ's defaults.
@Processor(PAYMENTS_QUEUE, { concurrency: 4, lockDuration: 30_000, stalledInterval: 10_000 })
export class PaymentsProcessor extends WorkerHost {
  constructor(private readonly tx: IdempotencyTransaction) {
    super();
  }

  // The key is the order: the same order added under two job ids is charged once.
  @IdempotentJob<Job<ChargeOrder>>({ key: (job) => job.data.orderId, ttl: '7d' })
  async process(job: Job<ChargeOrder>): Promise<{ payment: string }> {
    // This repository works in the key's transaction: the payment and the key commit together.
    const payments = this.tx.getRepository(Payment);
    const { customer, amount } = job.data;
    const { id } = await payments.save(payments.create({ caller: customer, amount, currency: 'EUR' }));
    return { payment: id };
  }
}
// #endregion processor
