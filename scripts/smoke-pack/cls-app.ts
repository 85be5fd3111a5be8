// The app the pack smoke test builds in a fresh ESM NestJS 12 folder with TypeORM and
// @nestjs-cls/transactional: IdempotentTransactionalAdapterTypeOrm from nestjs-pg-idempotency/cls
// in the ClsPluginTransactional setup, the payment written by a @Transactional() service method
// through TransactionHost. It pays twice with one key (one payment, the replay) and once with a
// handler that fails after the service's write (nothing kept). Exits 0 on success.
import 'reflect-metadata';
import { Controller, Headers, Injectable, InternalServerErrorException, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsPluginTransactional, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { ClsModule } from 'nestjs-cls';
import { CreateIdempotencyKeys1795996800000, IdempotencyModule, Idempotent } from 'nestjs-pg-idempotency';
import { IdempotentTransactionalAdapterTypeOrm } from 'nestjs-pg-idempotency/cls';
import pg from 'pg';
import { payTwiceAndFailOnce } from './pay-twice.js';

const url = process.env.DATABASE_URL!;
const caller = `smoke-cls-${process.pid}-${Date.now()}`;

@Injectable()
class Payments {
  constructor(private readonly txHost: TransactionHost<IdempotentTransactionalAdapterTypeOrm>) {}

  @Transactional()
  async pay(who: string): Promise<number> {
    const [row] = await this.txHost.tx.query('INSERT INTO smoke_payments (caller) VALUES ($1) RETURNING id', [who]);
    return row.id;
  }
}

@Controller('payments')
class PaymentsController {
  constructor(private readonly payments: Payments) {}

  @Post()
  @Idempotent()
  async pay(@Headers('x-caller') who: string, @Headers('x-fail') fail?: string): Promise<object> {
    const id = await this.payments.pay(who);
    if (fail) throw new InternalServerErrorException('failed after its write');
    return { id };
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url,
      migrations: [CreateIdempotencyKeys1795996800000],
      migrationsRun: true,
    }),
    ClsModule.forRoot({
      global: true,
      middleware: { mount: true },
      plugins: [
        new ClsPluginTransactional({
          adapter: new IdempotentTransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
        }),
      ],
    }),
    IdempotencyModule.forRoot({ anonymousCallers: 'shared', sweepInterval: 0 }),
  ],
  controllers: [PaymentsController],
  providers: [Payments],
})
class AppModule {}

async function main(): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query('CREATE TABLE IF NOT EXISTS smoke_payments (id serial PRIMARY KEY, caller text NOT NULL)');
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  const count = async (who: string) =>
    (await db.query('SELECT count(*)::int AS n FROM smoke_payments WHERE caller = $1', [who])).rows[0].n;
  const checks: Record<string, boolean> = {
    ...(await payTwiceAndFailOnce(base, caller, count)),
  };
  await app.close();
  await db.query('DELETE FROM smoke_payments WHERE caller LIKE $1', [`${caller}%`]);
  await db.end();
  console.log(JSON.stringify(checks));
  if (Object.values(checks).includes(false)) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
