// The hosts a test app process writes through (HOST), shared by the apps of test/e2e/ written in
// plain JavaScript: each host's modules for the app, and its one write of a payment in the key's
// transaction: 'typeorm' (IdempotencyTransaction), 'cls' (@nestjs-cls/transactional on TypeORM,
// a withTransaction() call), 'prisma' and 'cls-prisma' (IdempotentPrisma on a node-postgres pool,
// directly or through @nestjs-cls/transactional), 'drizzle' (IdempotentDrizzle on the pool).
import { Global, Module } from '@nestjs/common';
import { ClsPluginTransactional, TransactionHost } from '@nestjs-cls/transactional';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { ClsModule } from 'nestjs-cls';
import { IdempotencyModule, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { IdempotentTransactionalAdapterPrisma, IdempotentTransactionalAdapterTypeOrm } from 'nestjs-pg-idempotency/cls';
import { IdempotentDrizzle } from 'nestjs-pg-idempotency/drizzle';
import { IdempotentPrisma, IdempotentPrismaModule } from 'nestjs-pg-idempotency/prisma';
import pg from 'pg';
import { DataSource } from 'typeorm';

const env = process.env;

/** The host's modules (the module with `moduleOptions` too), and its one write of a payment (`app`: the Nest app, once created). */
export async function hostOf(name, moduleOptions = {}) {
  if (name === 'typeorm' || name === 'cls') {
    const dataSource = await new DataSource({ type: 'postgres', url: env.DATABASE_URL, poolSize: 10 }).initialize();
    const insert = (query, data) =>
      query('INSERT INTO payments (caller, amount, currency) VALUES ($1, $2, $3)', [data.caller, data.amount, 'EUR']);
    if (name === 'typeorm') {
      return {
        imports: [IdempotencyModule.forRoot({ dataSource, sweepInterval: 0, ...moduleOptions })],
        pay: (app, data) => insert((...args) => app.get(IdempotencyTransaction).manager.query(...args), data),
      };
    }
    class DataSourceModule {}
    Module({ providers: [{ provide: DataSource, useValue: dataSource }], exports: [DataSource] })(DataSourceModule);
    Global()(DataSourceModule);
    const plugin = new ClsPluginTransactional({
      imports: [DataSourceModule],
      adapter: new IdempotentTransactionalAdapterTypeOrm({ dataSourceToken: DataSource }),
    });
    return {
      imports: [
        DataSourceModule,
        ClsModule.forRoot({ global: true, plugins: [plugin] }),
        IdempotencyModule.forRoot({ dataSource, sweepInterval: 0, ...moduleOptions }),
      ],
      pay: (app, data) => {
        const txHost = app.get(TransactionHost);
        return txHost.withTransaction(() => insert((...args) => txHost.tx.query(...args), data));
      },
    };
  }
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 10 });
  if (name === 'prisma' || name === 'cls-prisma') {
    const { PrismaClient } = await import('../../dist/esm/demo/prisma/generated/client.js');
    const payment = (data) => ({ data: { caller: data.caller, amount: data.amount, currency: 'EUR' } });
    const prisma = [
      IdempotentPrismaModule.forRoot((adapter) => new PrismaClient({ adapter })),
      IdempotencyModule.forRoot({ pool, sweepInterval: 0, ...moduleOptions }),
    ];
    if (name === 'prisma')
      return { imports: prisma, pay: (app, data) => app.get(IdempotentPrisma).client.payment.create(payment(data)) };
    const plugin = new ClsPluginTransactional({
      adapter: new IdempotentTransactionalAdapterPrisma({ prismaInjectionToken: IdempotentPrisma }),
    });
    return {
      imports: [...prisma, ClsModule.forRoot({ global: true, plugins: [plugin] })],
      pay: (app, data) => {
        const txHost = app.get(TransactionHost);
        return txHost.withTransaction(() => txHost.tx.payment.create(payment(data)));
      },
    };
  }
  const db = new IdempotentDrizzle(drizzle({ client: pool }));
  return {
    imports: [IdempotencyModule.forRoot({ pool, sweepInterval: 0, ...moduleOptions })],
    pay: (_app, data) =>
      db.db.execute(
        sql`INSERT INTO payments (caller, amount, currency) VALUES (${data.caller}, ${data.amount}, 'EUR')`,
      ),
  };
}
