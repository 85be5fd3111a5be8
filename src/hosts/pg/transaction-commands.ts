/**
 * What a query text a tool sends does to the transaction it runs in, read from its statements
 * (comments, quoted strings, quoted identifiers and dollar-quoted bodies set aside, so that a
 * `DO $$ BEGIN … END $$` block is one ordinary statement).
 *
 * - `begin`: one statement that starts a transaction (`BEGIN`, `START TRANSACTION`), with what
 *   follows the command (its isolation level, its access mode);
 * - `commit`, `rollback`: one statement that ends it plainly (`COMMIT`, `END`, `ROLLBACK`,
 *   `ABORT`, with `WORK` or `TRANSACTION`);
 * - `refused`: any other transaction command (`COMMIT AND CHAIN`, `PREPARE TRANSACTION`,
 *   `COMMIT PREPARED`), or a transaction command among several statements;
 * - `undefined`: no transaction command (a savepoint's own commands included).
 */
export type TransactionCommand =
  { kind: 'begin'; rest: string } | { kind: 'commit' } | { kind: 'rollback' } | { kind: 'refused'; why: string };

const CONTROL =
  /^(?:begin|start\s+transaction|commit|end|abort|rollback(?!\s+(?:work\s+|transaction\s+)?to\b)|prepare\s+transaction)\b/i;
const BEGIN = /^(?:begin|start\s+transaction)\b(.*)$/is;
const COMMIT = /^(?:commit|end)(?:\s+(?:transaction|work))?$/i;
const ROLLBACK = /^(?:rollback|abort)(?:\s+(?:transaction|work))?$/i;

export function transactionCommand(text: string): TransactionCommand | undefined {
  const statements = statementsOf(text);
  const controls = statements.filter((statement) => CONTROL.test(statement));
  if (controls.length === 0) return undefined;
  if (statements.length > 1)
    return { kind: 'refused', why: `a transaction command among several statements in one query (${controls[0]})` };
  const [statement] = statements;
  const begin = BEGIN.exec(statement);
  if (begin) return { kind: 'begin', rest: begin[1] };
  if (COMMIT.test(statement)) return { kind: 'commit' };
  if (ROLLBACK.test(statement)) return { kind: 'rollback' };
  return { kind: 'refused', why: statement };
}

/** Matches what a statement's text sets aside: a comment, a quoted string or identifier, a dollar-quoted body. */
const SET_ASIDE =
  /--[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^']|'')*'|"(?:[^"]|"")*"|(\$(?:[A-Za-z_][A-Za-z_0-9]*)?\$)[\s\S]*?\1/g;

/** The statements of `text`, trimmed, with what they quote or comment replaced by a space. */
function statementsOf(text: string): string[] {
  return text
    .replace(SET_ASIDE, ' ')
    .split(';')
    .map((statement) => statement.trim().replace(/\s+/g, ' '))
    .filter((statement) => statement.length > 0);
}
