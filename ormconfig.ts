// The DataSource the TypeORM CLI uses in this repository (DATABASE_URL):
//   npm run migration:run
// Applications add CreateIdempotencyKeys1795996800000 to their own DataSource's migrations.
import { DataSource } from 'typeorm';
import { CreatePayments1795996800001 } from './src/demo/payments/create-payments.migration.js';
import { CreateRefunds1795996800002 } from './src/demo/refunds/create-refunds.migration.js';
import { CreateIdempotencyKeys1795996800000 } from './src/migrations/create-idempotency-keys.migration.js';

export default new DataSource({
  type: 'postgres',
  url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  migrations: [CreateIdempotencyKeys1795996800000, CreatePayments1795996800001, CreateRefunds1795996800002],
});
