import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { getDataSourceToken } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import { IdempotentTransactionalAdapterTypeOrm } from '../../tools/cls/index.js';

/**
 * `nestjs-cls` with its transactional plugin, set up as an app on `@nestjs-cls/transactional`
 * sets it up, with `IdempotentTransactionalAdapterTypeOrm` in place of `TransactionalAdapterTypeOrm`.
 */
export const TransactionalClsModule = ClsModule.forRoot({
  global: true,
  middleware: { mount: true },
  plugins: [
    new ClsPluginTransactional({
      adapter: new IdempotentTransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() }),
    }),
  ],
});
