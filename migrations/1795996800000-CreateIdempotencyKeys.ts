// The TypeORM migration class, for DataSources that load migrations from this folder.
// Applications import it from the package instead:
//   import { CreateIdempotencyKeys1795996800000 } from 'nestjs-pg-idempotency';
export { CreateIdempotencyKeys1795996800000 } from '../src/store/migrations/create-idempotency-keys.migration.js';
