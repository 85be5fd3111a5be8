// A Nest app whose every entry keeps tombstones, as a process of its own: each keyed unit writes
// one payment through the host HOST (../support/app-hosts.mjs; default 'drizzle'), with the ttl
// TTL and the tombstone TOMBSTONE, in MODE (default transactional). Every keyed HTTP answer
// carries Idempotency-Key-Expires (`expiryHeader: true`).
// - POST /payments { amount }: @Idempotent(), the caller the bearer token; answers 201 { paid }.
// - POST /webhooks/provider { id, payer, amount }: @Idempotent() of a named caller ('provider'),
//   the key the body's id; answers 200 { received }.
// - POST /calls/:key { caller, amount }: IdempotencyService.run() in scope 'payment.call';
//   answers { kind, value, tombstone }.
// - QUEUE set: a RabbitMQ consumer (Nest's RMQ transport, dead-letter queue QUEUE.dead) of
//   'payment.created' { caller, amount } with @IdempotentMessage().
// - JOB_QUEUE set: a BullMQ processor with @IdempotentJob() keyed by data.order, writing
//   { payer, amount } and returning { paid }.
// - POST /sweep: runs the module's sweeper now and answers what it did.
// GET /events answers the module's events counted by `type handler`. Prints "listening on <url>".
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Injectable, Module, Param, Post, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload, Transport } from '@nestjs/microservices';
import {
  IdempotencyEvents,
  IdempotencyService,
  IdempotencySweeper,
  Idempotent,
  IdempotentJob,
  IdempotentMessage,
} from 'nestjs-pg-idempotency';
import { hostOf } from '../support/app-hosts.mjs';
import { decorate } from '../support/decorate.mjs';

const env = process.env;
const keeping = { ttl: env.TTL ?? '2s', tombstone: env.TOMBSTONE ?? '1h', ...(env.MODE ? { mode: env.MODE } : {}) };
const chosen = await hostOf(env.HOST ?? 'drizzle', {
  caller: (request) => request.headers.authorization?.replace(/^Bearer /, ''),
  expiryHeader: true,
});
let app;
const pay = (data) => chosen.pay(app, data);

class PaymentsController {
  async create(request, body) {
    await pay({ caller: request.headers.authorization.replace(/^Bearer /, ''), amount: body.amount });
    return { paid: body.amount };
  }

  async webhook(body) {
    await pay({ caller: body.payer, amount: body.amount });
    return { received: body.id };
  }
}
Controller()(PaymentsController);
decorate(PaymentsController, 'create', [Post('payments'), Idempotent(keeping)], [Req(), Body()]);
decorate(
  PaymentsController,
  'webhook',
  [
    Post('webhooks/provider'),
    HttpCode(200),
    Idempotent({ ...keeping, keyFrom: { body: 'id' }, caller: 'provider', keyFormat: 'printable-ascii' }),
  ],
  [Body()],
);

class CallsController {
  async call(key, data) {
    const outcome = await app
      .get(IdempotencyService)
      .run(
        { scope: 'payment.call', key, caller: data.caller, payload: { amount: data.amount }, ...keeping },
        async () => {
          await pay(data);
          return { paid: data.amount };
        },
      );
    return { kind: outcome.kind, value: outcome.value, tombstone: outcome.tombstone };
  }

  async sweep() {
    return app.get(IdempotencySweeper).sweep();
  }
}
Controller()(CallsController);
decorate(CallsController, 'call', [Post('calls/:key')], [Param('key'), Body()]);
decorate(CallsController, 'sweep', [Post('sweep'), HttpCode(200)], []);

class MessagesController {
  async created(data) {
    await pay(data);
  }
}
Controller()(MessagesController);
decorate(MessagesController, 'created', [EventPattern('payment.created'), IdempotentMessage(keeping)], [Payload()]);

const counts = {};
class EventsController {
  events() {
    return counts;
  }
}
Controller('events')(EventsController);
decorate(EventsController, 'events', [Get()], []);

const imports = [...chosen.imports];
const providers = [];
if (env.JOB_QUEUE) {
  const { BullModule, Processor, WorkerHost } = await import('@nestjs/bullmq');
  const redis = new URL(env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  class PaymentsProcessor extends WorkerHost {
    async process(job) {
      await pay({ caller: job.data.payer, amount: job.data.amount });
      return { paid: job.data.amount };
    }
  }
  Injectable()(PaymentsProcessor);
  Processor(env.JOB_QUEUE, { lockDuration: 2000, stalledInterval: 1000 })(PaymentsProcessor);
  decorate(PaymentsProcessor, 'process', [IdempotentJob({ ...keeping, key: (job) => job.data.order })], []);
  imports.push(
    BullModule.forRoot({ connection: { host: redis.hostname, port: Number(redis.port || 6379) } }),
    BullModule.registerQueue({ name: env.JOB_QUEUE }),
  );
  providers.push(PaymentsProcessor);
}

class AppModule {}
Module({
  imports,
  controllers: [PaymentsController, CallsController, EventsController, ...(env.QUEUE ? [MessagesController] : [])],
  providers,
})(AppModule);

app = await NestFactory.create(AppModule, { logger: ['error'] });
app.get(IdempotencyEvents).subscribe((event) => {
  if (!event.handler) return;
  const name = `${event.type} ${event.handler}`;
  counts[name] = (counts[name] ?? 0) + 1;
});
if (env.QUEUE) {
  app.connectMicroservice({
    transport: Transport.RMQ,
    options: {
      urls: [env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672'],
      queue: env.QUEUE,
      noAck: false,
      queueOptions: {
        durable: true,
        arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${env.QUEUE}.dead` },
      },
    },
  });
  await app.startAllMicroservices();
}
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${app.getHttpServer().address().port}`);
