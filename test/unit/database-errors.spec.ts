import { isDatabaseUnavailable, isLostRace, isRefusedByDatabase } from '../../src/hosts/database-errors.js';

/** How the module reads a database error's SQLSTATE: a 503 to retry, a lost race, or a refusal a retry meets again. */
describe('database errors', () => {
  const pg = (code: string) => Object.assign(new Error(`failed with ${code}`), { code });
  const typeorm = (code: string) => Object.assign(new Error('QueryFailedError'), { driverError: pg(code) });

  it.each([
    ['08006', 'connection failure'],
    ['53300', 'too many connections'],
    ['57P01', 'admin shutdown'],
    ['57014', 'statement timeout'],
    ['55P03', 'lock timeout'],
    ['26000', 'a prepared statement gone with its server session'],
    ['25006', 'a read-only server (a primary demoted by a failover)'],
  ])('%s (%s) is unavailability, not a refusal', (code) => {
    for (const error of [pg(code), typeorm(code)]) {
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(isRefusedByDatabase(error)).toBe(false);
    }
  });

  it('a row of the partitioned key table with no partition for its expiry yet (23514) is unavailability, in any lc_messages: the next sweep creates it', () => {
    // PostgreSQL names the table and no constraint; the message text depends on the server's lc_messages.
    const fields = { code: '23514', table: 'idempotency_keys', schema: 'public' };
    const english = Object.assign(new Error('no partition of relation "idempotency_keys" found for row'), fields);
    const german = Object.assign(new Error('keine Partition von Relation »idempotency_keys« für die Zeile gefunden'), fields);
    for (const error of [english, { driverError: english }, german, { driverError: german }]) {
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(isRefusedByDatabase(error)).toBe(false);
    }
  });

  it('a CHECK constraint of the key table (23514 naming a constraint) stays a refusal', () => {
    const check = Object.assign(new Error('new row for relation "idempotency_keys" violates check constraint "idempotency_keys_state_check"'), {
      code: '23514',
      table: 'idempotency_keys',
      constraint: 'idempotency_keys_state_check',
    });
    expect(isDatabaseUnavailable(check)).toBe(false);
    expect(isRefusedByDatabase(check)).toBe(true);
  });

  it.each(['40001', '40P01'])('%s is a lost race: neither unavailability nor a refusal', (code) => {
    expect(isLostRace(typeorm(code))).toBe(true);
    expect(isDatabaseUnavailable(typeorm(code))).toBe(false);
    expect(isRefusedByDatabase(typeorm(code))).toBe(false);
  });

  it.each(['23505', '23514', '25P02', '22012'])('%s is a refusal a retry meets again', (code) => {
    expect(isRefusedByDatabase(pg(code))).toBe(true);
    expect(isDatabaseUnavailable(pg(code))).toBe(false);
    expect(isLostRace(pg(code))).toBe(false);
  });
});
