// The app the pack smoke test builds in a fresh folder, once as a CommonJS NestJS 11 app
// (TypeORM 0.3) and once as an ESM NestJS 12 app (TypeORM 1), against the packed tarball.
// It pays twice with one key through the package's client (transactional mode), refunds twice
// with one key (lease mode), checks the replays and the rows, and checks that an @Idempotent()
// route with @Res() fails the bootstrap. Exits 0 on success.
import 'reflect-metadata';
import { Controller, Module, Post, Req, Res, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  CreateIdempotencyKeys1795996800000,
  IdempotencyModule,
  IdempotencyTransaction,
  Idempotent,
  withIdempotencyCors,
} from 'nestjs-pg-idempotency';
import { IdempotentClient } from 'nestjs-pg-idempotency/client';
import pg from 'pg';

const url = process.env.DATABASE_URL!;
const caller = `smoke-${process.pid}-${Date.now()}`;

@Controller('payments')
class PaymentsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent()
  async pay(@Req() request: { headers: Record<string, string> }): Promise<object> {
    const [row] = await this.tx.manager.query('INSERT INTO smoke_payments (caller) VALUES ($1) RETURNING id', [
      request.headers['x-caller'],
    ]);
    return { id: row.id };
  }
}

@Controller('refunds')
class RefundsController {
  private calls = 0;

  constructor(private readonly tx: IdempotencyTransaction) {}

  /** Lease mode: an effect outside the database, keyed downstream by the request's key. */
  @Post()
  @Idempotent({ mode: 'lease' })
  refund(): object {
    this.calls++;
    return { providerKey: this.tx.downstreamKey('refund'), calls: this.calls };
  }
}

@Controller('raw')
class RawController {
  @Post()
  @Idempotent()
  pay(@Res() response: { send(body: string): void }): void {
    response.send('unreplayable');
  }
}

const modules = (controllers: Type[]) => {
  @Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url,
        migrations: [CreateIdempotencyKeys1795996800000],
        migrationsRun: true,
      }),
      IdempotencyModule.forRoot({ anonymousCallers: 'shared', sweepInterval: 0 }),
    ],
    controllers,
  })
  class AppModule {}
  return AppModule;
};

async function main(): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query('CREATE TABLE IF NOT EXISTS smoke_payments (id serial PRIMARY KEY, caller text NOT NULL)');

  const app = await NestFactory.create(modules([PaymentsController, RefundsController]), { logger: ['error'] });
  app.enableCors(withIdempotencyCors({ origin: 'https://shop.example' }));
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address();
  const client = new IdempotentClient();
  const init = { method: 'POST', headers: { 'x-caller': caller } };
  const first = await client.fetch(`http://127.0.0.1:${port}/payments`, init);
  const again = await client.fetch(`http://127.0.0.1:${port}/payments`, { ...init, idempotencyKey: first.key });
  const [firstBody, againBody] = [await first.response.text(), await again.response.text()];
  const { rows } = await db.query('SELECT count(*)::int AS n FROM smoke_payments WHERE caller = $1', [caller]);
  const refund = await client.fetch(`http://127.0.0.1:${port}/refunds`, init);
  const refundAgain = await client.fetch(`http://127.0.0.1:${port}/refunds`, { ...init, idempotencyKey: refund.key });
  const [refundBody, refundAgainBody] = [await refund.response.json(), await refundAgain.response.json()];
  await app.close();

  let refusal = 'none';
  const bad = await NestFactory.create(modules([RawController]), { logger: false });
  try {
    await bad.init();
  } catch (error) {
    refusal = (error as Error).name;
  }
  await bad.close().catch(() => undefined);
  await db.query('DELETE FROM smoke_payments WHERE caller = $1', [caller]);
  await db.end();

  const checks = {
    firstStatus: first.response.status === 201,
    replayed: !first.replayed && again.replayed,
    sameBody: firstBody === againBody,
    onePayment: rows[0].n === 1,
    refusedRes: refusal === 'UnreplayableRouteError',
    leaseReplayed: refund.response.status === 201 && refundAgain.replayed && refundAgainBody.calls === 1,
    downstreamKey: typeof refundBody.providerKey === 'string' && refundBody.providerKey.length > 0,
  };
  console.log(JSON.stringify(checks));
  if (Object.values(checks).includes(false)) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
