// The floors of the module's design: the baseline's handler in a transaction that also sends
// the key's statements the way transactional mode sends them for a fresh key (with START
// TRANSACTION and with COMMIT: the baseline's round trips), through the library's own TypeORM
// transaction host, with no interceptor, no response capture and no AsyncLocalStorage.
// - KEY_STATEMENTS=reservation (default): the key's lock and row lookup and the handler's
//   savepoint, then the key row's INSERT … ON CONFLICT: what transactional mode sends. Between
//   this server and the module lies the module's own work in the server; between it and the
//   baseline, what the key's statements cost.
// - KEY_STATEMENTS=insert: the key row's INSERT alone, with no lock and no lookup (which could not
//   keep a concurrent duplicate from running, nor find a recorded outcome): the ceiling of any
//   design that records the key in the handler's transaction.
// KEY_TABLE=partitioned (or partitioned-fresh) sends the key row's statement of the table
// partitioned by expiry (whose partitions the module creates: start a module server on the
// database first).
import { randomUUID } from 'node:crypto';
import { serverEnv } from './common.mjs';
import { Payment, servePlainApp } from './plain-app.mjs';
import { TypeOrmHost } from '../../dist/esm/hosts/typeorm/typeorm-host.js';
import { resolveModuleOptions } from '../../dist/esm/options/settings.js';
import { scopeKey } from '../../dist/esm/key/scoped-key.js';
import {
  RECORD_FRESH_OUTCOME_PARTITIONED,
  RECORD_OUTCOME,
  RECORD_OUTCOME_PARTITIONED,
} from '../../dist/esm/store/table/record.sql.js';
import { KEY_ROW, LOCK_KEY } from '../../dist/esm/store/table/reservation.sql.js';

const { databaseUrl } = serverEnv();
// The key row's statement: the plain table's, or the partitioned table's over a row in the way
// (partitioned) or where the lookup found none (partitioned-fresh).
const RECORDINGS = {
  plain: RECORD_OUTCOME,
  partitioned: RECORD_OUTCOME_PARTITIONED,
  'partitioned-fresh': RECORD_FRESH_OUTCOME_PARTITIONED,
};
const record = RECORDINGS[process.env.KEY_TABLE ?? 'plain'];
if (!record)
  throw new Error(`KEY_TABLE must be one of ${Object.keys(RECORDINGS).join(', ')}, got "${process.env.KEY_TABLE}"`);
const statements = process.env.KEY_STATEMENTS ?? 'reservation';
if (statements !== 'reservation' && statements !== 'insert')
  throw new Error(`KEY_STATEMENTS must be "reservation" or "insert", got "${statements}"`);
const fingerprint = Buffer.alloc(32, 7);
const headers = JSON.stringify([['content-type', 'application/json; charset=utf-8']]);
const ttlMs = 86_400_000;
/** One host per DataSource (the app has one), ready once its startup check is done. */
const hosts = new WeakMap();

function hostOf(dataSource) {
  let host = hosts.get(dataSource);
  if (!host) {
    const created = new TypeOrmHost(resolveModuleOptions({ dataSource }), undefined);
    host = created.onModuleInit().then(() => created);
    hosts.set(dataSource, host);
  }
  return host;
}

await servePlainApp(databaseUrl, async (dataSource, dto, request) => {
  const host = await hostOf(dataSource);
  const scope = scopeKey(randomUUID(), request.user.id, 'POST /payments');
  const reservation =
    statements === 'insert'
      ? []
      : [
          [LOCK_KEY, [scope.lockId]],
          [KEY_ROW, [scope.key, scope.caller, scope.endpoint, fingerprint]],
        ];
  const { transaction, results } = await host.begin(reservation, [record]);
  try {
    if (statements === 'reservation' && (results[0].rows[0].locked !== true || results[1].rows.length > 0))
      throw new Error('a fresh key was found taken');
    const payments = transaction.handle.getRepository(Payment);
    const saved = await payments.save(payments.create({ ...dto, caller: scope.caller }));
    const payment = await payments.findOneByOrFail({ id: saved.id });
    const body = Buffer.from(JSON.stringify(payment));
    await transaction.commitWith(
      [[record, [scope.key, scope.caller, scope.endpoint, fingerprint, 201, headers, body, ttlMs, null]]],
      false,
    );
    return payment;
  } catch (error) {
    await transaction.end('rollback').catch(() => undefined);
    throw error;
  }
});
