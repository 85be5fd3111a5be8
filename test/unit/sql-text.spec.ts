import pg from 'pg';
import { executeText, literal, prepareText, wholeText } from '../../src/hosts/wire/sql-text.js';
import { databaseUrl } from '../support/apps.js';
import { STAGE_MESSAGES } from '../../src/store/outbox/outbox.sql.js';
import { sql } from '../support/database.js';

const quoting = { escapeLiteral: (value: string) => `'${value.replace(/'/g, "''")}'` };

/**
 * Values inlined into statements sent with the simple protocol (behind a pooler in transaction
 * mode, or as `EXECUTE` of a prepared statement): the outbox's arrays among them, read back by
 * PostgreSQL as the values they were.
 */
describe('SQL literals of the simple protocol', () => {
  it('an array is ARRAY[…] of its elements (an empty one `{}`), and EXECUTE casts it to its parameter’s type', () => {
    expect(literal(['a', "b'c"], quoting)).toBe("ARRAY['a', 'b''c']");
    expect(literal([Buffer.from('hi')], quoting)).toBe("ARRAY[decode('6869', 'hex')]");
    expect(literal([], quoting)).toBe("'{}'");
    expect(executeText(STAGE_MESSAGES, [['id'], ['rmq'], ['q'], ['k'], [Buffer.from('x')], ['[]']], quoting)).toBe(
      `EXECUTE ${STAGE_MESSAGES.name} (ARRAY['id']::text[], ARRAY['rmq']::text[], ARRAY['q']::text[], ARRAY['k']::text[], ARRAY[decode('78', 'hex')]::bytea[], ARRAY['[]']::jsonb[])`,
    );
    expect(() => literal([1.5], quoting)).toThrow('cannot inline a number');
  });

  it('PostgreSQL reads the inlined arrays back as the values given, whole and as EXECUTE', async () => {
    const statement = {
      name: 'nestjs_pg_idempotency_test_arrays_v1',
      types: ['text[]', 'bytea[]', 'jsonb[]'],
      text: 'SELECT $1::text[] AS texts, $2::bytea[] AS bytes, $3::jsonb[] AS json',
    };
    const params = [["it's", 'plain'], [Buffer.from([0, 255])], ['[["x-tenant","acme"]]', '{"sealedWith":"k"}']];
    const [whole] = await sql(wholeText(statement, params, quoting));
    expect(whole).toEqual({
      texts: ["it's", 'plain'],
      bytes: [Buffer.from([0, 255])],
      json: [[['x-tenant', 'acme']], { sealedWith: 'k' }],
    });
    const [empty] = await sql(wholeText(statement, [[], [], []], quoting));
    expect(empty).toEqual({ texts: [], bytes: [], json: [] });
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      await client.query(prepareText(statement));
      const { rows } = await client.query(executeText(statement, params, quoting));
      expect(rows).toEqual([whole]);
    } finally {
      await client.end();
    }
  });
});
