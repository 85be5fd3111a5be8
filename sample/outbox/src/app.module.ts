// #region module
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { IdempotencyModule, rabbitMqPublisher } from 'nestjs-pg-idempotency';
import { jetStreamPublisher } from 'nestjs-pg-idempotency/jetstream';
import { BrokersModule, NATS } from './messaging/brokers.module.js';
import { RabbitMqChannel } from './messaging/rabbitmq-channel.js';
import { OrdersModule } from './orders/orders.module.js';

@Module({
  imports: [
    // The tables: `npm run migrate` (the key table, the outbox's with --outbox, then db/orders.sql).
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL }),
    IdempotencyModule.forRootAsync({
      imports: [BrokersModule],
      inject: [RabbitMqChannel, NATS],
      useFactory: (rabbit: RabbitMqChannel, nats: NatsConnection) => ({
        outbox: {
          publishers: {
            // A function: each publish asks for the current channel, so the relay goes on after a reconnect.
            rmq: rabbitMqPublisher(() => rabbit.channel()),
            nats: jetStreamPublisher(nats.jetstream()),
          },
        },
      }),
    }),
    OrdersModule,
  ],
})
export class AppModule {}
// #endregion module
