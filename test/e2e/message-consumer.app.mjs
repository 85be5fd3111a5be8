// A Nest app consuming messages exactly once, as a process of its own: a hybrid app whose
// microservice is Nest's RMQ transport (TRANSPORT=rmq, queue QUEUE, noAck: false, a dead-letter
// queue QUEUE.dead) or JetStreamServer (TRANSPORT=nats, stream STREAM, durable DURABLE). Each
// handler writes one row through the host HOST (../support/app-hosts.mjs; default 'drizzle').
// MODE=lease: the handlers in lease mode. Patterns carry PATTERN_PREFIX.
// - @EventPattern('payment.created') @IdempotentMessage({ maxAttempts: MAX_ATTEMPTS }): writes a
//   payment (caller, amount); data.poison: throws after its write; data.holdMs: holds that long
//   after its write; data.kill === 'before-commit': SIGKILLs itself after its write;
//   'after-commit': SIGKILLs itself once the outcome is committed, before the ack; SURVIVES=1: a
//   process that takes over from a killed one, and never kills itself (a redelivery's count is
//   not a sure sign: JetStream may deliver again with a count of 1 a message whose consumer died).
// - @MessagePattern('payment.quote') @IdempotentMessage({ maxAttempts: MAX_ATTEMPTS }): writes a
//   payment, answers { quote }; data.poison: throws after its write.
// - RMQ only: a consumer written by hand on MANUAL_QUEUE (amqplib, IdempotentMessages.consumeDelivery
//   over rmqDelivery), pattern 'payment.manual', writing the same row.
// - POST /calls/:key { caller, amount, holdMs?, poison? }: IdempotencyService.run() in scope
//   'payment.call' (caller data.caller, payload { amount }) over the same write; data.holdMs: holds
//   that long after its write; data.poison: throws after its write. Answers { kind, value }.
//   TRANSPORT=none: an app with no microservice, for the calls alone.
// GET /stats answers the module's message events counted by type; GET /stats/running the
// payment.created handlers running now and the most that ran at once. MAX_IN_FLIGHT: JetStreamServer's
// maxInFlight. Prints "listening on <url>".
import 'reflect-metadata';
import { Body, Controller, Get, Module, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload, Transport } from '@nestjs/microservices';
import amqplib from 'amqplib';
import {
  IdempotencyEvents,
  IdempotencyService,
  IdempotentMessage,
  IdempotentMessages,
  rmqDelivery,
} from 'nestjs-pg-idempotency';
import { JetStreamServer } from 'nestjs-pg-idempotency/jetstream';
import { hostOf } from '../support/app-hosts.mjs';
import { decorate } from '../support/decorate.mjs';

const env = process.env;
const transport = env.TRANSPORT ?? 'rmq';
const host = env.HOST ?? 'drizzle';
const RABBITMQ = env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const NATS = env.NATS_URL ?? 'nats://127.0.0.1:4222';
const options = {
  maxAttempts: Number(env.MAX_ATTEMPTS ?? 3),
  retryDelay: Number(env.RETRY_DELAY_MS ?? 100),
  ...(env.MODE ? { mode: env.MODE } : {}),
};
/** Prefixes the patterns (JetStream subjects: each test run's stream has subjects of its own). */
const PREFIX = env.PATTERN_PREFIX ?? '';
/** Deliveries whose outcome, once committed, this process dies on before it acks. */
const killAfterCommit = new Set();

const chosen = await hostOf(host);
let app;
const pay = async (data) => void (await chosen.pay(app, data));

const mayDie = env.SURVIVES !== '1';

class MessagesController {
  async created(data, context) {
    running.now++;
    running.most = Math.max(running.most, running.now);
    try {
      await pay(data);
      if (data.holdMs) await new Promise((resolve) => setTimeout(resolve, data.holdMs));
      if (data.poison) throw new Error(`poison message ${data.amount}`);
      if (data.kill === 'before-commit' && mayDie) process.kill(process.pid, 'SIGKILL');
      if (data.kill === 'after-commit' && mayDie) killAfterCommit.add(data.amount);
    } finally {
      running.now--;
    }
  }

  async quote(data) {
    await pay(data);
    if (data.poison) throw new Error(`poison quote ${data.amount}`);
    return { quote: data.amount * 2 };
  }
}
Controller()(MessagesController);
decorate(
  MessagesController,
  'created',
  [EventPattern(`${PREFIX}payment.created`), IdempotentMessage(options)],
  [Payload(), Ctx()],
);
decorate(
  MessagesController,
  'quote',
  [MessagePattern(`${PREFIX}payment.quote`), IdempotentMessage(options)],
  [Payload()],
);

const counts = {};
/** The payment.created handlers running now, and the most that ran at once. */
const running = { now: 0, most: 0 };
class StatsController {
  stats() {
    return counts;
  }

  running() {
    return running;
  }
}
Controller('stats')(StatsController);
decorate(StatsController, 'stats', [Get()], []);
decorate(StatsController, 'running', [Get('running')], []);

class CallsController {
  async call(key, data) {
    const outcome = await app
      .get(IdempotencyService)
      .run({ scope: 'payment.call', key, caller: data.caller, payload: { amount: data.amount } }, async () => {
        await pay(data);
        if (data.holdMs) await new Promise((resolve) => setTimeout(resolve, data.holdMs));
        if (data.poison) throw new Error(`poison call ${data.amount}`);
        return { paid: data.amount };
      });
    return { kind: outcome.kind, value: outcome.value };
  }
}
Controller('calls')(CallsController);
decorate(CallsController, 'call', [Post(':key')], [Param('key'), Body()]);

class AppModule {}
Module({ imports: chosen.imports, controllers: [MessagesController, StatsController, CallsController] })(AppModule);

app = await NestFactory.create(AppModule, { logger: ['error'] });
app.get(IdempotencyEvents).subscribe((event) => {
  if (!event.transport) return;
  counts[event.type] = (counts[event.type] ?? 0) + 1;
  // The outcome is committed; the ack has not been sent yet.
  if (event.type === 'executed' && killAfterCommit.size > 0) process.kill(process.pid, 'SIGKILL');
});
const queueOptions = {
  durable: true,
  arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${env.QUEUE}.dead` },
};
if (transport !== 'none') {
  app.connectMicroservice(
    transport === 'rmq'
      ? {
          transport: Transport.RMQ,
          options: { urls: [RABBITMQ], queue: env.QUEUE, noAck: false, prefetchCount: 16, queueOptions },
        }
      : {
          strategy: new JetStreamServer({
            servers: NATS,
            stream: env.STREAM,
            durable: env.DURABLE,
            ackWaitMs: Number(env.ACK_WAIT_MS ?? 30_000),
            maxInFlight: Number(env.MAX_IN_FLIGHT ?? 16),
          }),
        },
  );
  await app.startAllMicroservices();
}
if (transport === 'rmq' && env.MANUAL_QUEUE) {
  const connection = await amqplib.connect(RABBITMQ);
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue(env.MANUAL_QUEUE, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${env.MANUAL_QUEUE}.dead` },
  });
  await channel.prefetch(16);
  const messages = app.get(IdempotentMessages);
  const manual = { ...options, name: 'ManualConsumer.payment' };
  await channel.consume(env.MANUAL_QUEUE, (amqp) => {
    if (!amqp) return;
    const delivery = rmqDelivery(channel, amqp, 'payment.manual');
    void messages.consumeDelivery(delivery, () => pay(delivery.message.data), manual);
  });
}
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
