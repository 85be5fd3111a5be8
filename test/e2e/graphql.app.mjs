// A Nest GraphQL app whose mutations run exactly once, as a process of its own: DRIVER 'apollo'
// (Apollo Server on Express) or 'mercurius' (Mercurius on Fastify), schema first, writing one
// payment per mutation through the host HOST (../support/app-hosts.mjs; default 'typeorm').
// - createPayment(amount, holdMs, fail): key from the Idempotency-Key header, caller from the
//   X-Caller header; writes the payment, holds holdMs, throws after the write when fail is set,
//   SIGKILLs itself after the write when kill is set; answers { id, caller, amount, createdAt }
//   (a fresh id, a Date).
// - refund(input: { key, payer, amount }): key from the argument input.key, caller 'refunds';
//   writes a payment of the payer.
// - payments(payer): a query, not keyed.
// - Payment.label: a field resolver reading the payment's createdAt (a Date).
// MARK_QUERY=1 also marks the query @Idempotent(), MARK_FIELD=1 the field resolver, both of which
// the module refuses at bootstrap;
// MUTATION_OPTIONS (JSON) adds options to createPayment's.
// Prints "listening on <url>".
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  Args,
  Context,
  GraphQLISODateTime,
  GraphQLModule,
  Mutation,
  Parent,
  Query,
  ResolveField,
  Resolver,
} from '@nestjs/graphql';
import { Idempotent } from 'nestjs-pg-idempotency';
import { hostOf } from '../support/app-hosts.mjs';
import { decorate } from '../support/decorate.mjs';

const env = process.env;
const chosen = await hostOf(env.HOST ?? 'typeorm');
const fastify = env.DRIVER === 'mercurius';
let app;

const typeDefs = /* GraphQL */ `
  scalar DateTime
  type Payment {
    id: ID!
    caller: String!
    amount: Int!
    createdAt: DateTime!
    label: String!
  }
  input RefundInput {
    key: String!
    payer: String!
    amount: Int!
  }
  type Query {
    payments(payer: String!): Int!
  }
  type Mutation {
    createPayment(amount: Int!, holdMs: Int, fail: Boolean, kill: Boolean): Payment!
    refund(input: RefundInput!): Payment!
  }
`;

class PaymentsResolver {
  async createPayment(args, request) {
    const caller = request.headers['x-caller'];
    await chosen.pay(app, { caller, amount: args.amount });
    if (args.holdMs) await new Promise((resolve) => setTimeout(resolve, args.holdMs));
    if (args.fail) throw new Error('the payment fails after its write');
    if (args.kill) process.kill(process.pid, 'SIGKILL');
    return { id: randomUUID(), caller, amount: args.amount, createdAt: new Date() };
  }

  async refund(input) {
    await chosen.pay(app, { caller: input.payer, amount: input.amount });
    return { id: randomUUID(), caller: input.payer, amount: input.amount, createdAt: new Date() };
  }

  payments() {
    return 0;
  }
}
Resolver()(PaymentsResolver);
decorate(
  PaymentsResolver,
  'createPayment',
  [
    Mutation(),
    Idempotent({ caller: (request) => request.headers['x-caller'], ...JSON.parse(env.MUTATION_OPTIONS ?? '{}') }),
  ],
  [Args(), Context('req')],
);
decorate(
  PaymentsResolver,
  'refund',
  [Mutation(), Idempotent({ keyFrom: { argument: 'input.key' }, caller: 'refunds', keyFormat: 'printable-ascii' })],
  [Args('input')],
);
decorate(PaymentsResolver, 'payments', env.MARK_QUERY === '1' ? [Query(), Idempotent()] : [Query()], [Args('payer')]);

/** The Payment type's field resolver: `label`, from the resolved payment (a Date, on a replay too). */
class PaymentFieldsResolver {
  label(payment) {
    return `${payment.amount} on ${payment.createdAt.toISOString()}`;
  }
}
Resolver('Payment')(PaymentFieldsResolver);
decorate(PaymentFieldsResolver, 'label', env.MARK_FIELD === '1' ? [ResolveField(), Idempotent()] : [ResolveField()], [
  Parent(),
]);

const { driver, adapter } = fastify
  ? {
      driver: (await import('@nestjs/mercurius')).MercuriusDriver,
      adapter: new (await import('@nestjs/platform-fastify')).FastifyAdapter(),
    }
  : { driver: (await import('@nestjs/apollo')).ApolloDriver, adapter: undefined };

class AppModule {}
Module({
  imports: [
    ...chosen.imports,
    GraphQLModule.forRoot({ driver, typeDefs, resolvers: { DateTime: GraphQLISODateTime } }),
  ],
  providers: [PaymentsResolver, PaymentFieldsResolver],
})(AppModule);

app = await NestFactory.create(AppModule, ...(adapter ? [adapter] : []), { logger: ['error'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
