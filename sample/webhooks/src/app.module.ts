import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreateIdempotencyKeys1795996800000, IdempotencyModule } from 'nestjs-pg-idempotency';
import { CreateWebhookTables1796601600000 } from './database/create-webhook-tables.migration.js';
import { GitHubWebhooksController } from './github/github-webhooks.controller.js';
import { Payment } from './stripe/payment.entity.js';
import { StripeWebhooksController } from './stripe/stripe-webhooks.controller.js';

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [Payment],
      // The key table's migration beside the app's own, run at startup.
      migrations: [CreateIdempotencyKeys1795996800000, CreateWebhookTables1796601600000],
      migrationsRun: true,
    }),
    IdempotencyModule.forRoot(),
  ],
  controllers: [StripeWebhooksController, GitHubWebhooksController],
})
export class AppModule {}
