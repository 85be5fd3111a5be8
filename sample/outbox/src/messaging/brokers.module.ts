// #region brokers
import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { connect, type NatsConnection } from 'nats';
import { RabbitMqChannel } from './rabbitmq-channel.js';

export const NATS = Symbol('NATS');

/** The app's broker connections: RabbitMQ's channel, reopened after a drop; NATS, whose client reconnects by itself. */
@Module({
  providers: [
    RabbitMqChannel,
    {
      provide: NATS,
      useFactory: () => connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', maxReconnectAttempts: -1 }),
    },
  ],
  exports: [RabbitMqChannel, NATS],
})
export class BrokersModule implements OnApplicationShutdown {
  constructor(@Inject(NATS) private readonly nats: NatsConnection) {}

  async onApplicationShutdown(): Promise<void> {
    await this.nats.drain();
  }
}
// #endregion brokers
