// The app the pack smoke test builds in a fresh ESM NestJS 12 folder with Prisma 7 and pg and no
// TypeORM installed, as a Prisma team writes it: a schema, `prisma generate`, the module on the
// node-postgres pool, `IdempotentPrisma` given the app's `new PrismaClient({ adapter })`, and a
// service writing two models. It pays twice with one key (one payment and one ledger entry, the
// replay) and once with a handler that fails after its writes (nothing kept); a module given no
// pool fails at bootstrap naming `{ pool }`. Exits 0 on success.
import 'reflect-metadata';
import { Controller, Headers, Injectable, InternalServerErrorException, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Idempotent, IdempotencyModule } from 'nestjs-pg-idempotency';
import { IdempotentPrisma, idempotentPrisma } from 'nestjs-pg-idempotency/prisma';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';
import { PrismaClient } from './generated/client.js';
import { payTwiceAndFailOnce, resolvesTypeorm } from './pay-twice.js';

const url = process.env.DATABASE_URL!;
const caller = `smoke-prisma-${process.pid}-${Date.now()}`;
const pool = new pg.Pool({ connectionString: url });

@Injectable()
class PaymentsService {
  constructor(private readonly prisma: IdempotentPrisma<PrismaClient>) {}

  async pay(who: string): Promise<{ id: number }> {
    const payment = await this.prisma.client.smokePayment.create({ data: { caller: who } });
    await this.prisma.client.smokeLedgerEntry.create({ data: { paymentId: payment.id } });
    return { id: payment.id };
  }
}

@Controller('payments')
class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  @Post()
  @Idempotent()
  async pay(@Headers('x-caller') who: string, @Headers('x-fail') fail?: string): Promise<object> {
    const payment = await this.payments.pay(who);
    if (fail) throw new InternalServerErrorException('failed after its writes');
    return payment;
  }
}

@Module({
  imports: [IdempotencyModule.forRoot({ pool, anonymousCallers: 'shared', sweepInterval: 0 })],
  controllers: [PaymentsController],
  providers: [PaymentsService, idempotentPrisma((adapter) => new PrismaClient({ adapter }))],
})
class AppModule {}

// The module forgotten its { pool }: with no TypeORM installed, bootstrap names the option to pass.
@Module({
  imports: [IdempotencyModule.forRoot({ anonymousCallers: 'shared', sweepInterval: 0 })],
  providers: [idempotentPrisma((adapter) => new PrismaClient({ adapter }))],
})
class NoPoolModule {}

async function bootstrapError(): Promise<string> {
  let app: Awaited<ReturnType<typeof NestFactory.create>> | undefined;
  try {
    app = await NestFactory.create(NoPoolModule, { logger: false, abortOnError: false });
    await app.init();
    return 'started';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await app?.close().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const migration = createRequire(import.meta.url).resolve(
    'nestjs-pg-idempotency/migrations/1795996800000-create-idempotency-keys.sql',
  );
  await pool.query(readFileSync(migration, 'utf8'));
  await pool.query('CREATE TABLE IF NOT EXISTS smoke_prisma_payments (id serial PRIMARY KEY, caller text NOT NULL)');
  await pool.query(
    'CREATE TABLE IF NOT EXISTS smoke_prisma_ledger (id serial PRIMARY KEY, payment_id integer NOT NULL REFERENCES smoke_prisma_payments (id) ON DELETE CASCADE)',
  );
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  const count = async (who: string) =>
    (
      await pool.query(
        'SELECT count(*)::int AS n FROM smoke_prisma_payments p JOIN smoke_prisma_ledger l ON l.payment_id = p.id WHERE p.caller = $1',
        [who],
      )
    ).rows[0].n;
  const checks: Record<string, boolean> = {
    ...(await payTwiceAndFailOnce(base, caller, count)),
    noTypeorm: !resolvesTypeorm(import.meta.url),
    noPoolNamesTheOption: (await bootstrapError()).includes('pass { pool }'),
  };
  await app.close();
  await pool.query('DELETE FROM smoke_prisma_payments WHERE caller LIKE $1', [`${caller}%`]);
  await pool.end();
  console.log(JSON.stringify(checks));
  if (Object.values(checks).includes(false)) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
