// #region transport
import { type MicroserviceOptions, Transport } from '@nestjs/microservices';
import { connect } from 'amqplib';

const url = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const queue = process.env.PAYMENTS_QUEUE ?? 'payments';

/** Nest's RMQ transport, consuming `queue` with manual acks: the module acks each message after its commit. */
export function rabbitMq(): MicroserviceOptions {
  return {
    transport: Transport.RMQ,
    options: {
      urls: [url],
      queue,
      noAck: false, // Nest's default, true, acks on delivery
      prefetchCount: 16, // Nest's default, 0, hands the whole backlog to one process
      queueOptions: {
        durable: true,
        arguments: {
          'x-queue-type': 'quorum',
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': `${queue}.dead`,
        },
      },
    },
  };
}

/** Nest declares only the queue it consumes: the dead-letter queue is yours, or the broker drops dead letters. */
export async function declareDeadLetterQueue(): Promise<void> {
  const connection = await connect(url);
  try {
    const channel = await connection.createChannel();
    await channel.assertQueue(`${queue}.dead`, { durable: true });
  } finally {
    await connection.close();
  }
}
// #endregion transport
