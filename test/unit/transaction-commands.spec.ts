import { transactionCommand } from '../../src/hosts/pg/transaction-commands.js';

/** What the node-postgres host's key client makes of the query texts a tool sends. */
describe('transactionCommand', () => {
  it.each([
    ['BEGIN', { kind: 'begin', rest: '' }],
    ['begin isolation level serializable', { kind: 'begin', rest: ' isolation level serializable' }],
    ['  START TRANSACTION READ WRITE;  ', { kind: 'begin', rest: ' READ WRITE' }],
    ['COMMIT', { kind: 'commit' }],
    ['end work;', { kind: 'commit' }],
    ['ROLLBACK', { kind: 'rollback' }],
    ['abort transaction', { kind: 'rollback' }],
    ['-- a note\nCOMMIT', { kind: 'commit' }],
  ])('%j is %j', (text, expected) => {
    expect(transactionCommand(text)).toEqual(expected);
  });

  it.each([
    'BEGIN; UPDATE accounts SET balance = 0; COMMIT',
    "INSERT INTO payments VALUES ('x'); COMMIT",
    'UPDATE t SET a = 1; /* done */ ROLLBACK',
    'SELECT 1;\n-- then\nEND',
    'COMMIT AND CHAIN',
    'rollback and chain',
    "PREPARE TRANSACTION 'p1'",
    "COMMIT PREPARED 'p1'",
    "ROLLBACK PREPARED 'p1'",
  ])('%j is refused', (text) => {
    expect(transactionCommand(text)?.kind).toBe('refused');
  });

  it.each([
    'SELECT 1',
    'INSERT INTO payments (caller) VALUES ($1); SELECT 2',
    'savepoint sp1',
    'release savepoint sp1',
    'rollback to savepoint sp1',
    'ROLLBACK TO sp1',
    'DO $$ BEGIN INSERT INTO t VALUES (1); END $$',
    'DO $body$ BEGIN PERFORM 1; COMMIT; END $body$; SELECT 1',
    "SELECT 'a; COMMIT' AS text",
    'SELECT 1 AS "x; ROLLBACK"',
    '/* BEGIN; */ SELECT 1',
    'SELECT 1 -- ; COMMIT',
  ])('%j holds no transaction command', (text) => {
    expect(transactionCommand(text)).toBeUndefined();
  });
});
