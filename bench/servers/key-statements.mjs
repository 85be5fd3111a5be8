// The floors of the module's design: the baseline's handler in a transaction that also sends
// the key's statements the way transactional mode sends them for a fresh key (with START
// TRANSACTION and with COMMIT: the baseline's round trips), through the library's own functions,
// with no interceptor, no response capture and no AsyncLocalStorage.
// - KEY_STATEMENTS=reservation (default): the key's lock and row lookup and the handler's
//   savepoint, then the key row's INSERT: what transactional mode sends. Between this server and the module lies the module's
//   own work in the server; between it and the baseline, what the key's statements cost.
// - KEY_STATEMENTS=insert: the key row's INSERT alone, with no lock and no lookup (which could not
//   keep a concurrent duplicate from running, nor find a recorded outcome): the ceiling of any
//   design that records the key in the handler's transaction.
import { randomUUID } from 'node:crypto';
import { serverEnv } from './common.mjs';
import { Payment, servePlainApp } from './plain-app.mjs';
import { commitWith, startTransactionWith } from '../../dist/esm/store/combined-statements.js';
import { scopeLockId } from '../../dist/esm/store/key-scope.js';
import { rollbackAndRelease } from '../../dist/esm/store/release-query-runner.js';
import { HANDLER_SAVEPOINT, INSERT_OUTCOME, KEY_ROW, LOCK_KEY } from '../../dist/esm/store/store.sql.js';

const { databaseUrl } = serverEnv();
const statements = process.env.KEY_STATEMENTS ?? 'reservation';
if (statements !== 'reservation' && statements !== 'insert') throw new Error(`KEY_STATEMENTS must be "reservation" or "insert", got "${statements}"`);
const fingerprint = Buffer.alloc(32, 7);
const headers = JSON.stringify([['content-type', 'application/json; charset=utf-8']]);
const ttlMs = 86_400_000;

await servePlainApp(databaseUrl, async (dataSource, dto, request) => {
  const scope = { key: randomUUID(), caller: request.user.id, endpoint: 'POST /payments' };
  const queryRunner = dataSource.createQueryRunner('master');
  try {
    if (statements === 'insert') await startTransactionWith(queryRunner, []);
    else {
      const [[lock], rows] = await startTransactionWith(queryRunner, [
        [LOCK_KEY, [scopeLockId(scope)]],
        [KEY_ROW, [scope.key, scope.caller, scope.endpoint, fingerprint]],
      ], [], HANDLER_SAVEPOINT);
      if (lock.locked !== true || rows.length > 0) throw new Error('a fresh key was found taken');
    }
    const payments = queryRunner.manager.getRepository(Payment);
    const saved = await payments.save(payments.create({ ...dto, caller: scope.caller }));
    const payment = await payments.findOneByOrFail({ id: saved.id });
    const body = Buffer.from(JSON.stringify(payment));
    await commitWith(queryRunner, INSERT_OUTCOME, [scope.key, scope.caller, scope.endpoint, fingerprint, 201, headers, body, ttlMs]);
    await queryRunner.release();
    return payment;
  } catch (error) {
    await rollbackAndRelease(queryRunner);
    throw error;
  }
});
