import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import {
  IdempotentTransactionalAdapterPrisma,
  IdempotentTransactionalAdapterTypeOrm,
} from '../../src/tools/cls/index.js';
import { IdempotentPrisma } from '../../src/tools/prisma/index.js';
import { startPrismaLab } from '../support/prisma-lab.js';
import { appDatabaseUrl, bootstrapFailure, startLab } from '../support/apps.js';
import { sql } from '../support/database.js';

/** The cls adapter with `joinAsSavepoint` left out: a `Required` transaction joins the key's without a savepoint. */
class AdapterWithoutSavepoints extends IdempotentTransactionalAdapterTypeOrm {
  override onModuleInit(): void {}
}

/** The same on Prisma. */
class PrismaAdapterWithoutSavepoints extends IdempotentTransactionalAdapterPrisma {
  override onModuleInit(): void {}
}

const clsWith = (adapter: IdempotentTransactionalAdapterTypeOrm | IdempotentTransactionalAdapterPrisma) =>
  ClsModule.forRoot({ global: true, middleware: { mount: true }, plugins: [new ClsPluginTransactional({ adapter })] });

/** What the cls adapter's startup check refuses, on a real key transaction. */
describe('the @nestjs-cls/transactional adapter at bootstrap', () => {
  it('starts, and leaves nothing behind, when everything it promises holds', async () => {
    const before = await sql<{ count: string }>('SELECT count(*) FROM idempotency_keys');
    const app = await startLab(
      {},
      { imports: [clsWith(new IdempotentTransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }))] },
    );
    await app.close();
    expect(await sql('SELECT count(*) FROM idempotency_keys')).toEqual(before);
  });

  it('refuses to start when a failing Propagation.Required transaction would keep its writes (no savepoint), naming the version', async () => {
    const failure = await bootstrapFailure(
      startLab({}, { imports: [clsWith(new AdapterWithoutSavepoints({ dataSourceToken: getDataSourceToken() }))] }),
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).name).toBe('IdempotencyConfigurationError');
    expect((failure as Error).message).toMatch(
      /^nestjs-pg-idempotency: @nestjs-cls\/transactional 3\.\d+\.\d+: a failing Propagation.Required transaction/,
    );
    expect((failure as Error).message).toMatch(/lease mode/);
  });

  it('on Prisma, refuses to start when a failing Propagation.Required transaction would keep its writes', async () => {
    const failure = await bootstrapFailure(
      startPrismaLab(
        {},
        { imports: [clsWith(new PrismaAdapterWithoutSavepoints({ prismaInjectionToken: IdempotentPrisma }))] },
      ),
    );
    expect((failure as Error).name).toBe('IdempotencyConfigurationError');
    expect((failure as Error).message).toMatch(
      /@nestjs-cls\/transactional 3\.\d+\.\d+: a failing Propagation.Required transaction/,
    );
  });

  it("refuses to start when the adapter was given another DataSource than the module's", async () => {
    const other = TypeOrmModule.forRoot({ name: 'other', type: 'postgres', url: appDatabaseUrl(), extra: { max: 2 } });
    const adapter = new IdempotentTransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken('other') });
    const failure = await bootstrapFailure(startLab({}, { imports: [other, clsWith(adapter)] }));
    expect((failure as Error).message).toMatch(/another DataSource than the one IdempotencyModule reserves keys on/);
  });
});
