import {
  Body,
  Controller,
  Get,
  type INestApplication,
  Module,
  Post,
  UnprocessableEntityException,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import amqplib, { type ChannelModel } from 'amqplib';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Registry } from 'prom-client';
import {
  IdempotencyEvents,
  IdempotencyModule,
  IdempotencyOutbox,
  IdempotencyOutboxConsole,
  Idempotent,
  OutboxRelay,
  OutboxStagingError,
  rabbitMqPublisher,
} from '../../src/index.js';
import type { IdempotencyEvent } from '../../src/observe/events/idempotency-event.js';
import { IdempotencyHealthIndicator } from '../../src/operations/terminus/index.js';
import { databaseUrl } from '../support/apps.js';
import { sql } from '../support/database.js';
import { send } from '../support/http.js';
import { waitFor } from '../support/processes.js';
import { RABBITMQ_URL } from '../support/rabbitmq.js';
import { describeWith } from '../support/services.js';

@Controller()
class StagingController {
  constructor(
    private readonly outbox: IdempotencyOutbox,
    private readonly health: HealthCheckService,
    private readonly indicator: IdempotencyHealthIndicator,
  ) {}

  @Post('stage')
  @Idempotent()
  stage(@Body() body: { destination: string }) {
    return { id: this.outbox.stage({ destination: body.destination, payload: { staged: true } }) };
  }

  @Post('stage-leased')
  @Idempotent({ mode: 'lease' })
  stageLeased(@Body() body: { destination: string; fail?: boolean }) {
    const id = this.outbox.stage({ destination: body.destination, payload: { leased: true } });
    if (body.fail) throw new UnprocessableEntityException('declined after staging');
    return { id };
  }

  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check([() => this.indicator.isOutboxHealthy('outbox', { maxLagMs: 300 })]);
  }
}

@Module({ imports: [TerminusModule], controllers: [StagingController], providers: [IdempotencyHealthIndicator] })
class StagingModule {}

/**
 * The outbox's operations on the machine's RabbitMQ, in one app: a message whose routing key no
 * queue is bound to is returned by the broker (it would be dropped), so it stays unsent and is
 * tried again; the console, the health indicator, the events and the metrics say so; once a queue
 * is there, `retryNow()` sends it, and the sweep deletes it after `keepSent`.
 */
describeWith('rabbitmq')(
  'the outbox’s operations: a broker that refuses, the console, health, metrics, sweeping',
  () => {
    let app: INestApplication;
    let url: string;
    let broker: ChannelModel;
    const registry = new Registry();
    const events: IdempotencyEvent[] = [];
    const pool = new pg.Pool({ connectionString: databaseUrl(), max: 4 });

    beforeAll(async () => {
      broker = await amqplib.connect(RABBITMQ_URL);
      const channel = await broker.createConfirmChannel();
      @Module({
        imports: [
          IdempotencyModule.forRoot({
            pool,
            anonymousCallers: 'shared',
            sweepInterval: 0,
            metrics: { registry },
            outbox: {
              publishers: { rmq: rabbitMqPublisher(channel) },
              retryDelay: 50,
              pollInterval: 50,
              keepSent: 0,
            },
          }),
          StagingModule,
        ],
      })
      class AppModule {}
      app = await NestFactory.create(AppModule, { logger: false });
      app.get(IdempotencyEvents).subscribe((event) => void events.push(event));
      await app.listen(0, '127.0.0.1');
      url = await app.getUrl();
    });

    afterAll(async () => {
      await app?.close();
      await broker?.close();
      await pool.end();
    });

    it('a returned message stays unsent and is tried again (console, events, health, metrics); once its queue exists it is sent, then swept', async () => {
      // The backlog is the table's: messages earlier tests left unsent (their relays are gone, the
      // suites run one at a time) would count in it too.
      await sql('DELETE FROM idempotency_outbox WHERE sent_at IS NULL');
      const destination = `idempotency-outbox-unbound.${randomUUID()}`;
      const staged = await send(`${url}/stage`, { body: { destination }, key: randomUUID() });
      expect(staged.status).toBe(201);
      const console = app.get(IdempotencyOutboxConsole);
      // An attempt counts from its claim, and its event comes once the broker has answered: the
      // console may show the second attempt a moment before the second event.
      const failedEvents = () =>
        events.filter((event) => event.type === 'outbox-relayed' && event.outcome === 'failed').length;
      const unsent = await waitFor('two refused publishes, in the console and the events', async () => {
        const found = (await console.unsent()).find((message) => message.messageId === staged.json.id);
        return found && found.attempts >= 2 && failedEvents() >= 2 ? found : undefined;
      });
      expect(unsent).toMatchObject({
        publisher: 'rmq',
        destination,
        lastError: `RabbitMQ returned the message: no queue is bound for "${destination}"`,
      });
      expect(failedEvents()).toBeGreaterThanOrEqual(2);
      const lagging = await waitFor('the health check down', async () => {
        const health = await send(`${url}/health`, { method: 'GET' });
        return health.status === 503 ? health : undefined;
      });
      expect(lagging.json.details.outbox).toMatchObject({ status: 'down', reachable: true, unsent: 1, maxLagMs: 300 });
      expect((await console.backlog()).unsent).toBe(1);

      const channel = await broker.createChannel();
      await channel.assertQueue(destination, { durable: false, autoDelete: false });
      try {
        expect(await console.retryNow(unsent.id)).toBe(true);
        const delivered = await waitFor(
          'the message in its queue',
          async () => (await channel.get(destination)) || undefined,
        );
        expect(delivered.properties.messageId).toBe(staged.json.id);
        expect(JSON.parse(delivered.content.toString())).toEqual({ staged: true });
        await waitFor('the message marked sent', async () => (await console.backlog()).unsent === 0);
        expect((await send(`${url}/health`, { method: 'GET' })).json.details.outbox).toMatchObject({
          status: 'up',
          unsent: 0,
        });
        expect(await console.retryNow(unsent.id)).toBe(false);
      } finally {
        await channel.deleteQueue(destination);
        await channel.close();
      }
      const metrics = await registry.getSingleMetricAsString('idempotency_outbox_messages_total');
      expect(metrics).toMatch(/idempotency_outbox_messages_total\{publisher="rmq",outcome="failed"\} [2-9]/);
      expect(metrics).toMatch(/idempotency_outbox_messages_total\{publisher="rmq",outcome="sent"\} 1/);
      expect(await registry.getSingleMetricAsString('idempotency_outbox_lag_seconds')).toMatch(
        /_count\{publisher="rmq"\} 1/,
      );

      expect(await app.get(OutboxRelay).sweepSent()).toBeGreaterThanOrEqual(1);
      expect(await sql('SELECT 1 FROM idempotency_outbox WHERE message_id = $1', [staged.json.id])).toEqual([]);
    });

    it('stage() outside keyed work refuses; in lease mode a message is written with the outcome and sent once, and a failed run leaves none', async () => {
      expect(() => app.get(IdempotencyOutbox).stage({ destination: 'nowhere', payload: {} })).toThrow(
        OutboxStagingError,
      );
      const destination = `idempotency-outbox-leased.${randomUUID()}`;
      const channel = await broker.createChannel();
      await channel.assertQueue(destination, { durable: false });
      try {
        const declined = await send(`${url}/stage-leased`, { body: { destination, fail: true }, key: randomUUID() });
        expect(declined.status).toBe(422);
        expect(await sql('SELECT 1 FROM idempotency_outbox WHERE destination = $1', [destination])).toEqual([]);
        const key = randomUUID();
        const leased = await send(`${url}/stage-leased`, { body: { destination }, key });
        expect(leased.status).toBe(201);
        const replayed = await send(`${url}/stage-leased`, { body: { destination }, key });
        expect(replayed.json).toEqual(leased.json);
        const delivered = await waitFor(
          'the message in its queue',
          async () => (await channel.get(destination)) || undefined,
        );
        expect(delivered.properties.messageId).toBe(leased.json.id);
        const sent = () =>
          sql('SELECT 1 FROM idempotency_outbox WHERE destination = $1 AND sent_at IS NOT NULL', [destination]);
        await waitFor('the message marked sent', async () => (await sent()).length === 1);
        expect(await sql('SELECT message_id FROM idempotency_outbox WHERE destination = $1', [destination])).toEqual([
          { message_id: leased.json.id },
        ]);
        expect(await channel.get(destination)).toBe(false);
      } finally {
        await channel.deleteQueue(destination);
        await channel.close();
      }
    });
  },
);
