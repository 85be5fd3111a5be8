// #region transport
import type { MicroserviceOptions } from '@nestjs/microservices';
import { JetStreamServer } from 'nestjs-pg-idempotency/jetstream';

/** The same @EventPattern() handlers, fed from a JetStream stream: one durable pull consumer per pattern, explicit acks. */
export function jetStream(): MicroserviceOptions {
  return {
    strategy: new JetStreamServer({
      servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
      stream: process.env.PAYMENTS_STREAM ?? 'PAYMENTS', // created with the handlers' subjects if missing
      durable: 'ledger', // every process with this name competes on the same consumers
    }),
  };
}
// #endregion transport
