import type { DrizzleConfig } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { isKeyClient, type KeyClient } from '../../hosts/pg/key-client.js';
import { executionContext } from '../../hosts/execution-context.js';

/**
 * Drizzle on the key's transaction. Build one beside the app's Drizzle database (on the same
 * node-postgres `Pool` the module is given as `pool`), and write through `db`: inside an
 * `@Idempotent()` request it is a Drizzle database bound to the key's transaction, so the writes
 * commit or roll back with the key; anywhere else (lease mode included) it is the app's own
 * database.
 *
 * ```ts
 * providers: [{ provide: IdempotentDrizzle, inject: [DB], useFactory: (db) => new IdempotentDrizzle(db, { schema }) }]
 * constructor(private readonly drizzle: IdempotentDrizzle<typeof schema>) {}
 * pay(dto) { return this.drizzle.db.insert(payments).values(dto).returning(); }
 * ```
 *
 * Inside the key's transaction, `db.transaction()` runs as a savepoint of it (its writes undone
 * if it throws); an isolation level is refused (the key's transaction is READ COMMITTED).
 * `config` is the app's Drizzle config (`schema`, `casing`, `logger`). A bound database is built
 * once per pooled connection (with a schema, its relational metadata with it).
 */
export class IdempotentDrizzle<TSchema extends Record<string, unknown> = Record<string, never>> {
  private readonly bound = new WeakMap<KeyClient, NodePgDatabase<TSchema>>();

  constructor(
    private readonly fallback: NodePgDatabase<TSchema>,
    private readonly config: DrizzleConfig<TSchema> = {},
  ) {}

  /** The key's transaction inside an `@Idempotent()` request, else the app's database. */
  get db(): NodePgDatabase<TSchema> {
    const handle = executionContext.getStore()?.handle;
    if (!isKeyClient(handle)) return this.fallback;
    let db = this.bound.get(handle);
    if (!db) this.bound.set(handle, (db = drizzle({ ...this.config, client: handle as never })));
    return db;
  }

  /** Whether `db` is the key's transaction here. */
  get isActive(): boolean {
    return isKeyClient(executionContext.getStore()?.handle);
  }
}
