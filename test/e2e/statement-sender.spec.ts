import { Logger } from '@nestjs/common';
import pg from 'pg';
import { StatementSender, StatementsVanishedError } from '../../src/hosts/wire/statement-sender.js';
import { prepareText } from '../../src/hosts/wire/sql-text.js';
import { LOCK_KEY } from '../../src/store/table/reservation.sql.js';
import { databaseUrl } from '../support/apps.js';

/**
 * The module's statements over one real connection whose server session already holds one of
 * them, as a server session a pooler shares between connections would: the sender was never told.
 */
describe('a statement found prepared on a connection that never prepared it', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    await client.query(prepareText(LOCK_KEY));
  });
  afterAll(() => client.end());

  it('switches the sender to whole statements, with one warning, and the same message sent again succeeds', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const sender = new StatementSender(true);
      const failed = await sender.send(client, [[LOCK_KEY, ['42']]]).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(StatementsVanishedError);
      expect(sender.prepares).toBe(false);
      const [result] = await sender.send(client, [[LOCK_KEY, ['42']]]);
      expect(result.rows).toEqual([{ locked: true }]);
      const lines = warn.mock.calls
        .map(([message]) => String(message))
        .filter((message) => message.includes('found prepared already'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /pooler in transaction mode \(PgBouncer\), or a PREPARE whose answer was lost.*preparedStatements: false/,
      );
    } finally {
      warn.mockRestore();
    }
  });
});
