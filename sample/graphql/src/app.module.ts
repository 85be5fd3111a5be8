import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreateIdempotencyKeys1795996800000, IdempotencyModule } from 'nestjs-pg-idempotency';
import { CreatePayments1796601600000 } from './payments/create-payments.migration.js';
import { Payment } from './payments/payment.entity.js';
import { PaymentsResolver } from './payments/payments.resolver.js';
import { Refund } from './payments/refund.entity.js';

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [Payment, Refund],
      // The key table's migration beside the app's own, run at startup.
      migrations: [CreateIdempotencyKeys1795996800000, CreatePayments1796601600000],
      migrationsRun: true,
    }),
    GraphQLModule.forRoot<ApolloDriverConfig>({
      driver: ApolloDriver,
      autoSchemaFile: true, // code first: the schema is built from the decorators, in memory
      // Apollo puts a stack trace (file paths included) in every error's extensions unless
      // NODE_ENV is production or test: the module's refusals too. Off, whatever NODE_ENV says.
      includeStacktraceInErrorResponses: false,
    }),
    IdempotencyModule.forRoot(),
  ],
  providers: [PaymentsResolver],
})
export class AppModule {}
