import type { QueryRunner } from 'typeorm';

/** A `pg` client, as far as destroying its socket goes. */
export interface DestroyableClient {
  connection?: { stream?: { destroy(): void } };
}

/**
 * `work`, given up after `timeoutMs`: `onGiveUp` runs (it destroys the connection the work runs
 * on, so that the pool drops it instead of keeping it checked out), and the result rejects with
 * `what` in its message. A connection that died without a word (a lost NAT or load-balancer
 * entry, a failed-over host) never answers: without a bound, a statement on it waits for as long
 * as the operating system keeps the socket. What `work` does after it was given up is ignored.
 */
export async function givenUpAfter<T>(what: string, timeoutMs: number, work: Promise<T>, onGiveUp: () => void): Promise<T> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onGiveUp();
      reject(new Error(`${what} did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Destroys the socket of `client` (a `pg` client): its pending query fails, its pool drops it. */
export function destroyConnection(client: DestroyableClient | undefined): void {
  client?.connection?.stream?.destroy();
}

/**
 * Connects `queryRunner` to its pool, given up after `timeoutMs` (a pool whose connections are all
 * taken, or a database that does not answer). Resolves `false` when given up: the connection, if
 * it ever comes, is then released at once, unused, and the caller must leave `queryRunner` alone
 * (releasing a query runner that is still connecting would keep that connection checked out).
 */
export async function connectWithin(queryRunner: QueryRunner, timeoutMs: number): Promise<boolean> {
  const connecting = queryRunner.connect();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  try {
    const connected = await Promise.race([connecting.then(() => true as const), late]);
    if (!connected) void connecting.then(() => queryRunner.release(), () => undefined);
    return connected;
  } finally {
    clearTimeout(timer);
  }
}

/** The `pg` client a TypeORM query runner holds, once connected (TypeORM's `databaseConnection`). */
export function connectionOf<Client = DestroyableClient>(queryRunner: QueryRunner): Client | undefined {
  return (queryRunner as unknown as { databaseConnection?: Client }).databaseConnection;
}
