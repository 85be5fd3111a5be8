import { Controller, type INestApplication, Inject, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { TypeOrmModule } from '@nestjs/typeorm';
import express from 'express';
import type { Server } from 'node:http';
import { IdempotencyModule, Idempotent } from '../../src/index.js';
import { databaseUrl } from '../support/apps.js';
import { sql } from '../support/database.js';
import { newCaller, newKey, send } from '../support/http.js';

// Nest apps mounted by an outer Express app (API versions, tenants): each mount is its own scope.

const VERSION = Symbol('version');

@Controller('orders')
class OrdersController {
  constructor(@Inject(VERSION) private readonly version: string) {}

  @Post()
  @Idempotent()
  create(): object {
    return { apiVersion: this.version };
  }
}

async function versionApp(version: string): Promise<{ app: INestApplication; instance: express.Express }> {
  @Module({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url: databaseUrl() }),
      IdempotencyModule.forRoot({ sweepInterval: 0, caller: (request) => request.headers['x-caller'] }),
    ],
    controllers: [OrdersController],
    providers: [{ provide: VERSION, useValue: version }],
  })
  class VersionModule {}
  const instance = express();
  const app = await NestFactory.create(VersionModule, new ExpressAdapter(instance), { logger: false });
  await app.init();
  return { app, instance };
}

describe('Express apps mounted under a path by an outer app', () => {
  const apps: INestApplication[] = [];
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const outer = express();
    for (const version of ['v1', 'v2']) {
      const { app, instance } = await versionApp(version);
      apps.push(app);
      outer.use(`/${version}`, instance);
    }
    server = outer.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    for (const app of apps) await app.close();
  });

  it('the same key on /v1/orders and /v2/orders is two requests, each answered by its own app', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const headers = { 'x-caller': caller };
    const v1 = await send(`${url}/v1/orders`, { key, caller: null, body: {}, headers });
    const v2 = await send(`${url}/v2/orders`, { key, caller: null, body: {}, headers });
    expect([v1.json, v2.json]).toEqual([{ apiVersion: 'v1' }, { apiVersion: 'v2' }]);
    expect(v2.headers['idempotent-replayed']).toBeUndefined();
    const rows = await sql<{ endpoint: string }>(
      'SELECT endpoint FROM idempotency_keys WHERE caller = $1 ORDER BY endpoint',
      [caller],
    );
    expect(rows.map((row) => row.endpoint)).toEqual(['POST /v1/orders', 'POST /v2/orders']);
    const replay = await send(`${url}/v2/orders`, { key, caller: null, body: {}, headers });
    expect([replay.headers['idempotent-replayed'], replay.json]).toEqual(['true', { apiVersion: 'v2' }]);
  });

  it('a retry spelling the mount otherwise (Express matches mounts in any case) is replayed, not run again', async () => {
    const [caller, key] = [newCaller(), newKey()];
    const headers = { 'x-caller': caller };
    await send(`${url}/v1/orders`, { key, caller: null, body: {}, headers });
    const retry = await send(`${url}/V1/orders`, { key, caller: null, body: {}, headers });
    expect([retry.status, retry.headers['idempotent-replayed']]).toEqual([201, 'true']);
    const rows = await sql<{ endpoint: string }>('SELECT endpoint FROM idempotency_keys WHERE caller = $1', [caller]);
    expect(rows.map((row) => row.endpoint)).toEqual(['POST /v1/orders']);
  });
});
