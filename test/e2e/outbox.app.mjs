// An app that stages messages in the key's transaction (IdempotencyOutbox), as a process of its
// own, writing through the host HOST (../support/app-hosts.mjs; default 'drizzle'). Its outbox
// has two publishers: 'rmq' (rabbitMqPublisher over an amqplib confirm channel) and 'nats'
// (jetStreamPublisher); RELAY=0 turns its relay off; CLAIM_MS, POLL_MS set the relay's claim and
// poll interval; TYPEORM_ACCESS: the module's typeormAccess; SEALED=1: storage.encryption on (outcomes and staged messages sealed).
// - POST /orders (@Idempotent(), anonymous callers share one scope) { caller, amount, messages?,
//   to?, destination, orderingKey?, headers?, fail?, kill?, killRelay? }: writes a payment (caller, amount),
//   then stages `messages` (default 1) messages to `destination` on publisher `to` (default
//   'rmq'), each Nest's envelope { pattern: PATTERN, data: { caller: `${caller}:out`, amount:
//   amount * 1000 + n, killRelay } }; `fail`: throws after staging; `kill: 'after-commit'`:
//   SIGKILLs itself once the outcome is committed, before answering. Answers { ids }.
// - POST /calls/:key { caller, amount, destination }: the same through IdempotencyService.run().
// - IN_QUEUE: an @IdempotentMessage() consumer of 'order.forward' on that queue (Nest's RMQ
//   transport), which does what POST /orders does with the message's data (maxAttempts 1).
// - A message whose data has killRelay: the relay SIGKILLs the process once the broker confirmed
//   it, before marking it sent (SURVIVES=1: a process that never kills itself).
// Prints "listening on <url>".
import 'reflect-metadata';
import { Body, Controller, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload, Transport } from '@nestjs/microservices';
import amqplib from 'amqplib';
import { connect } from 'nats';
import {
  IdempotencyEvents,
  IdempotencyOutbox,
  IdempotencyService,
  Idempotent,
  IdempotentMessage,
  rabbitMqPublisher,
} from 'nestjs-pg-idempotency';
import { jetStreamPublisher } from 'nestjs-pg-idempotency/jetstream';
import { hostOf } from '../support/app-hosts.mjs';
import { decorate } from '../support/decorate.mjs';

const env = process.env;
const RABBITMQ = env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const NATS = env.NATS_URL ?? 'nats://127.0.0.1:4222';
const PATTERN = env.PATTERN ?? 'payment.created';
const mayDie = env.SURVIVES !== '1';

const amqp = await amqplib.connect(RABBITMQ);
const channel = await amqp.createConfirmChannel();
const nats = env.NO_NATS === '1' ? undefined : await connect({ servers: NATS });
/** `publisher`, whose process dies once the broker has a message whose data says killRelay. */
const killingAfter = (publisher) => ({
  async publish(message) {
    await publisher.publish(message);
    if (mayDie && message.payload.includes('"killRelay":true')) process.kill(process.pid, 'SIGKILL');
  },
});
const publishers = {
  rmq: killingAfter(rabbitMqPublisher(channel)),
  ...(nats ? { nats: killingAfter(jetStreamPublisher(nats.jetstream())) } : {}),
};
const chosen = await hostOf(env.HOST ?? 'drizzle', {
  anonymousCallers: 'shared',
  ...(env.TYPEORM_ACCESS ? { typeormAccess: env.TYPEORM_ACCESS } : {}),
  ...(env.SEALED === '1'
    ? { storage: { encryption: { keys: [{ id: 'outbox-test', key: Buffer.alloc(32, 7) }] } } }
    : {}),
  outbox: {
    publishers,
    relay: env.RELAY !== '0',
    claim: Number(env.CLAIM_MS ?? 30_000),
    pollInterval: Number(env.POLL_MS ?? 1000),
    retryDelay: 100,
  },
});
let app;
let killAfterCommit = false;

function stageAll(data) {
  const outbox = app.get(IdempotencyOutbox);
  const ids = [];
  for (let n = 0; n < (data.messages ?? 1); n++) {
    ids.push(
      outbox.stage({
        to: data.to ?? 'rmq',
        destination: data.destination,
        orderingKey: data.orderingKey,
        headers: data.headers,
        payload: {
          pattern: PATTERN,
          data: { caller: `${data.caller}:out`, amount: data.amount * 1000 + n, killRelay: data.killRelay === true },
        },
      }),
    );
  }
  return ids;
}

class OrdersController {
  async order(data) {
    await chosen.pay(app, data);
    const ids = stageAll(data);
    if (data.fail) throw new Error(`failed after staging ${data.amount}`);
    if (data.kill === 'after-commit' && mayDie) killAfterCommit = true;
    return { ids };
  }

  async call(key, data) {
    const outcome = await app.get(IdempotencyService).run({ scope: 'order.call', key, payload: data }, async () => {
      await chosen.pay(app, data);
      const ids = stageAll(data);
      if (data.fail) throw new Error(`failed after staging ${data.amount}`);
      return { ids };
    });
    return { kind: outcome.kind, value: outcome.value };
  }
}
Controller()(OrdersController);
decorate(OrdersController, 'order', [Post('orders'), Idempotent()], [Body()]);
decorate(OrdersController, 'call', [Post('calls/:key')], [Param('key'), Body()]);

class ForwardController {
  async forward(data) {
    await chosen.pay(app, data);
    stageAll(data);
    if (data.fail) throw new Error(`failed after staging ${data.amount}`);
  }
}
Controller()(ForwardController);
decorate(
  ForwardController,
  'forward',
  [EventPattern('order.forward'), IdempotentMessage({ maxAttempts: 1 })],
  [Payload()],
);

class AppModule {}
Module({ imports: chosen.imports, controllers: [OrdersController, ForwardController] })(AppModule);

app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
app.get(IdempotencyEvents).subscribe((event) => {
  // The outcome and the staged messages are committed; the answer has not been sent.
  if (event.type === 'executed' && killAfterCommit) process.kill(process.pid, 'SIGKILL');
});
if (env.IN_QUEUE) {
  app.connectMicroservice({
    transport: Transport.RMQ,
    options: {
      urls: [RABBITMQ],
      queue: env.IN_QUEUE,
      noAck: false,
      // As test/support/rabbitmq.ts declares the test queues: dead letters to `<queue>.dead`.
      queueOptions: {
        durable: true,
        arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${env.IN_QUEUE}.dead` },
      },
    },
  });
  await app.startAllMicroservices();
}
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
