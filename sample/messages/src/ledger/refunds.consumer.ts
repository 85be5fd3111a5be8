// #region consumer
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type AmqpConnectionManager, connect } from 'amqp-connection-manager';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { type ConsumeOptions, IdempotencyTransaction, IdempotentMessages, rmqDelivery } from 'nestjs-pg-idempotency';
import { LedgerEntry } from './ledger-entry.entity.js';

interface RefundIssued {
  paymentId: string;
  amount: number;
}

/** Refunds, consumed with amqplib by hand: each message runs once per message id, in its key's transaction. */
@Injectable()
export class RefundsConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RefundsConsumer.name);
  private readonly options: ConsumeOptions = { name: 'RefundsConsumer.issued', maxAttempts: 3 };
  private connection?: AmqpConnectionManager;

  constructor(
    private readonly messages: IdempotentMessages,
    private readonly tx: IdempotencyTransaction,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const queue = process.env.REFUNDS_QUEUE ?? 'refunds';
    // amqp-connection-manager reconnects after a dropped connection and runs `setup` on each new channel.
    this.connection = connect([process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672']);
    const channel = this.connection.createChannel({
      setup: async (channel: ConfirmChannel) => {
        await channel.assertQueue(`${queue}.dead`, { durable: true });
        await channel.assertQueue(queue, {
          durable: true,
          arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${queue}.dead` },
        });
        await channel.prefetch(16);
        await channel.consume(queue, (message) => message && this.receive(channel, message));
      },
    });
    await channel.waitForConnect();
  }

  private receive(channel: ConfirmChannel, amqp: ConsumeMessage): void {
    const delivery = rmqDelivery(channel, amqp, 'refund.issued');
    // Runs once per message key, in the key's transaction; then acks, requeues or dead-letters.
    this.messages
      .consumeDelivery(delivery, () => this.record(delivery.message.data as RefundIssued), this.options)
      // A channel closed before the ack: the broker delivers the message again, and its key absorbs it.
      .catch((error: Error) => this.logger.warn(`a refund was not settled: ${error.message}`));
  }

  private async record(refund: RefundIssued): Promise<void> {
    await this.tx.getRepository(LedgerEntry).insert({ paymentId: refund.paymentId, amount: -refund.amount });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.connection?.close();
  }
}
// #endregion consumer
