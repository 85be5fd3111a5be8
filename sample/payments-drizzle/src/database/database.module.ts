import { Global, Module, type OnApplicationShutdown } from '@nestjs/common';
import { drizzle } from 'drizzle-orm/node-postgres';
import { IdempotentDrizzle } from 'nestjs-pg-idempotency/drizzle';
import { Pool } from 'pg';
import * as schema from './schema.js';

// One pool for the app's Drizzle database and for the module (IdempotencyModule.forRoot({ pool })).
export const pool = new Pool({ connectionString: process.env.DATABASE_URL });
export const db = drizzle({ client: pool, schema });

@Global()
@Module({
  // Write through idempotentDrizzle.db: the key's transaction inside an @Idempotent() request, `db` elsewhere.
  providers: [{ provide: IdempotentDrizzle, useValue: new IdempotentDrizzle(db, { schema }) }],
  exports: [IdempotentDrizzle],
})
export class DatabaseModule implements OnApplicationShutdown {
  // Runs after the module drained the keys in flight.
  onApplicationShutdown() {
    return pool.end();
  }
}
