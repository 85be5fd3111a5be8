// The app the pack smoke test builds in a fresh ESM NestJS 12 folder with Drizzle ORM and pg and
// no TypeORM installed: the module on a node-postgres pool (the `pool` option), the payment written
// through nestjs-pg-idempotency/drizzle. It pays twice with one key (one payment, the replay) and
// once with a handler that fails after its write (nothing kept). Exits 0 on success.
import 'reflect-metadata';
import { Controller, Headers, InternalServerErrorException, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { IdempotencyModule, Idempotent } from 'nestjs-pg-idempotency';
import { IdempotentDrizzle } from 'nestjs-pg-idempotency/drizzle';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';
import { payTwiceAndFailOnce, resolvesTypeorm } from './pay-twice.js';

const url = process.env.DATABASE_URL!;
const caller = `smoke-drizzle-${process.pid}-${Date.now()}`;
const pool = new pg.Pool({ connectionString: url });
const db = drizzle({ client: pool });
const tx = new IdempotentDrizzle(db);

@Controller('payments')
class PaymentsController {
  @Post()
  @Idempotent()
  async pay(@Headers('x-caller') who: string, @Headers('x-fail') fail?: string): Promise<object> {
    const result = await tx.db.execute(sql`INSERT INTO smoke_payments (caller) VALUES (${who}) RETURNING id`);
    if (fail) throw new InternalServerErrorException('failed after its write');
    return { id: (result.rows[0] as { id: number }).id };
  }
}

@Module({
  imports: [IdempotencyModule.forRoot({ pool, anonymousCallers: 'shared', sweepInterval: 0 })],
  controllers: [PaymentsController],
})
class AppModule {}

async function main(): Promise<void> {
  const migration = createRequire(import.meta.url).resolve(
    'nestjs-pg-idempotency/migrations/1795996800000-create-idempotency-keys.sql',
  );
  await pool.query(readFileSync(migration, 'utf8'));
  await pool.query('CREATE TABLE IF NOT EXISTS smoke_payments (id serial PRIMARY KEY, caller text NOT NULL)');
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  const count = async (who: string) =>
    (await pool.query('SELECT count(*)::int AS n FROM smoke_payments WHERE caller = $1', [who])).rows[0].n;
  const checks: Record<string, boolean> = {
    ...(await payTwiceAndFailOnce(base, caller, count)),
    noTypeorm: !resolvesTypeorm(import.meta.url),
  };
  await app.close();
  await pool.query('DELETE FROM smoke_payments WHERE caller LIKE $1', [`${caller}%`]);
  await pool.end();
  console.log(JSON.stringify(checks));
  if (Object.values(checks).includes(false)) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
