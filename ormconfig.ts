// The DataSource the TypeORM CLI uses in this repository (DATABASE_URL):
//   npm run migration:run
// Applications add CreateIdempotencyKeys1795996800000 to their own DataSource's migrations.
import { DataSource } from 'typeorm';
import { DEMO_TABLES } from './src/demo/demo-tables.js';
import { CreateIdempotencyKeys1795996800000 } from './src/store/migrations/create-idempotency-keys.migration.js';

export default new DataSource({
  type: 'postgres',
  url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  migrations: [CreateIdempotencyKeys1795996800000, ...DEMO_TABLES],
});
