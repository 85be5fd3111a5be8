import type { QueryRunner } from 'typeorm';

/**
 * Transactional mode sends its statements together with the transaction's own `START
 * TRANSACTION` and `COMMIT`, so that a request costs no round trip more than the same handler in
 * a plain transaction: "START TRANSACTION; <reserve>" and "<complete>; COMMIT" each travel as
 * one simple-protocol query. The simple protocol takes no bind parameters, so values are inlined
 * as literals: strings through the driver's `escapeLiteral`, bytes as `decode('<hex>', 'hex')`,
 * integers as digits; nothing else is accepted.
 *
 * The QueryRunner is kept in step (`isTransactionActive`, its transaction depth) and TypeORM's
 * transaction events are broadcast as `startTransaction()`/`commitTransaction()` would, so that
 * nested `manager.transaction()` calls use savepoints and subscribers still hear the commit.
 */
export async function startTransactionWith(queryRunner: QueryRunner, sql: string, params: unknown[]): Promise<any[]> {
  const client = await pgClient(queryRunner);
  await queryRunner.broadcaster.broadcast('BeforeTransactionStart');
  setTransactionState(queryRunner, true, 1);
  const results = await client.query(`START TRANSACTION;\n${inline(sql, params, client)}`);
  await queryRunner.broadcaster.broadcast('AfterTransactionStart');
  return results[1].rows;
}

/** Runs `sql` and `COMMIT` in one round trip; returns the statement's row count. */
export async function commitWith(queryRunner: QueryRunner, sql: string, params: unknown[]): Promise<number> {
  const client = await pgClient(queryRunner);
  await queryRunner.broadcaster.broadcast('BeforeTransactionCommit');
  const results = await client.query(`${inline(sql, params, client)};\nCOMMIT`);
  setTransactionState(queryRunner, false, 0);
  await queryRunner.broadcaster.broadcast('AfterTransactionCommit');
  return results[0].rowCount ?? 0;
}

interface PgClient {
  query(sql: string): Promise<Array<{ rows: any[]; rowCount: number | null }>>;
  escapeLiteral(value: string): string;
}

async function pgClient(queryRunner: QueryRunner): Promise<PgClient> {
  const client = (await queryRunner.connect()) as PgClient;
  if (typeof client?.escapeLiteral !== 'function') {
    throw new Error('nestjs-pg-idempotency: the DataSource must use the PostgreSQL driver (pg)');
  }
  return client;
}

function setTransactionState(queryRunner: QueryRunner, active: boolean, depth: number): void {
  const state = queryRunner as unknown as { isTransactionActive: boolean; transactionDepth: number };
  state.isTransactionActive = active;
  state.transactionDepth = depth;
}

function inline(sql: string, params: unknown[], client: PgClient): string {
  return sql.replace(/\$(\d+)/g, (_placeholder, index: string) => literal(params[Number(index) - 1], client));
}

function literal(value: unknown, client: PgClient): string {
  if (value === null || value === undefined) return 'NULL';
  if (Buffer.isBuffer(value)) return `decode('${value.toString('hex')}', 'hex')`;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string') return client.escapeLiteral(value);
  throw new TypeError(`nestjs-pg-idempotency: cannot inline a ${typeof value} into SQL`);
}
