import pg from 'pg';
import type { KeyClient } from '../../hosts/pg/key-client.js';

/**
 * A node-postgres `Pool` of one connection, a key transaction's: what `PrismaPg` is given for
 * that connection. Every query it is asked for goes to the connection's `KeyClient` (so a
 * transaction Prisma begins there is a savepoint of the key's, and its `COMMIT` or `ROLLBACK`
 * ends the savepoint; a query from outside the key's transaction is refused), and a connection
 * it lends for a Prisma transaction is that same client, whose `release()` gives nothing back:
 * the module does, when the key's transaction ends. It is a `pg.Pool` (its prototype), as
 * `PrismaPg` requires, and never opens a connection of its own.
 */
export function keyConnectionPool(client: KeyClient): pg.Pool {
  const lent = {
    query: (config: unknown, values?: unknown) => client.query(config, values),
    on: () => lent,
    removeListener: () => lent,
    release: () => undefined,
  };
  return Object.assign(Object.create(pg.Pool.prototype) as pg.Pool, {
    options: {},
    query: (config: unknown, values?: unknown) => client.query(config, values),
    connect: async () => lent,
    on() {
      return this;
    },
    removeListener() {
      return this;
    },
    end: async () => undefined,
  });
}
