import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ShuttingDownError } from '../../src/core/gates/key-drain.js';
import { DatabaseUnavailableError, LostRaceError, RefusedByDatabaseError } from '../../src/hosts/database-failures.js';
import { RolledBackAtCommitError } from '../../src/hosts/wire/commit-outcome.js';
import { StatementsVanishedError } from '../../src/hosts/wire/statement-sender.js';
import { givenUpAfter, StatementTimeoutError } from '../../src/hosts/wire/time-bound.js';
import {
  IdempotencyConfigurationError,
  IdempotencyError,
  KeyConsoleInputError,
  KeyNotFoundError,
  MisplacedDecoratorError,
  NotAnHttpRouteError,
  OutboxPublishError,
  OutboxStagingError,
  UnreadableOutcomeError,
} from '../../src/index.js';
import { MessageNotAnsweredError } from '../../src/messages/message-entry.js';
import { NewTransactionInKeyError } from '../../src/tools/cls/transactional.errors.js';

/** Where an error may be built from `Error` itself: the base, the client and the test kit (no Nest, subpaths of their own). */
const OWN_BASE = ['idempotency.errors.ts'];
const OUTSIDE_THE_MODULE = ['client/', 'demo/', 'testing/'];

/** The module's own files of src/ (paths relative to src/), the base's excepted. */
function moduleFiles(): string[] {
  return (readdirSync('src', { recursive: true }) as string[]).filter(
    (file) =>
      file.endsWith('.ts') && !OWN_BASE.includes(file) && !OUTSIDE_THE_MODULE.some((folder) => file.startsWith(folder)),
  );
}

describe('one error base: every error of the module is an IdempotencyError', () => {
  it('no file of src/ throws a bare Error or extends Error but the base itself', () => {
    const bare = moduleFiles().filter((file) =>
      /\bnew Error\(|\bthrow Error\(|\bextends Error\b/.test(readFileSync(join('src', file), 'utf8')),
    );
    expect(bare).toEqual([]);
  });

  it('no error of the module sets its own name by hand: the base sets it from the class (a job settlement takes the name BullMQ reads)', () => {
    const named = moduleFiles().filter((file) => {
      const text = readFileSync(join('src', file), 'utf8');
      return /\bextends \w+Error\b/.test(text) && /\b(?:override name|this\.name) = '/.test(text);
    });
    expect(named).toEqual([]);
  });

  it('NotAnHttpRouteError, its former name, is the same class (an alias until the next major)', () => {
    const error = new NotAnHttpRouteError(['A.b']);
    expect(error).toBeInstanceOf(MisplacedDecoratorError);
    expect(new MisplacedDecoratorError(['A.b'])).toBeInstanceOf(NotAnHttpRouteError);
  });

  it.each<[string, Error]>([
    ['IdempotencyConfigurationError', new IdempotencyConfigurationError('set the pool option')],
    ['MisplacedDecoratorError', new MisplacedDecoratorError(['A.b'])],
    ['OutboxPublishError', new OutboxPublishError('no queue is bound')],
    ['OutboxStagingError', new OutboxStagingError('outside keyed work')],
    ['NewTransactionInKeyError', new NewTransactionInKeyError()],
    ['DatabaseUnavailableError', new DatabaseUnavailableError(new Error('connection terminated'), '57P01')],
    ['LostRaceError', new LostRaceError(new Error('deadlock detected'), '40P01')],
    ['RefusedByDatabaseError', new RefusedByDatabaseError(new Error('division by zero'), '22012')],
    [
      'StatementsVanishedError',
      new StatementsVanishedError(new Error('prepared statement "x" does not exist'), 'the pooler lost it'),
    ],
    ['RolledBackAtCommitError', new RolledBackAtCommitError()],
    ['StatementTimeoutError', new StatementTimeoutError('a sweep did not answer within 10 ms')],
    ['ShuttingDownError', new ShuttingDownError()],
    ['UnreadableOutcomeError', new UnreadableOutcomeError('unknown key id', 'k1')],
    ['KeyConsoleInputError', new KeyConsoleInputError('no such key')],
    ['KeyNotFoundError', new KeyNotFoundError('no row')],
    ['MessageNotAnsweredError', new MessageNotAnsweredError('dead-lettered')],
  ])('%s is an IdempotencyError named after its class', (name, error) => {
    expect(error).toBeInstanceOf(IdempotencyError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
  });

  it('keeps the cause: a database failure carries the driver error, and says what it said', () => {
    const driver = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const failure = new DatabaseUnavailableError(driver, '57P01');
    expect(failure.cause).toBe(driver);
    expect(failure.message).toBe('terminating connection due to administrator command');
    expect(failure.sqlState).toBe('57P01');
    const wrapped = new IdempotencyConfigurationError('the pool is closed', { cause: driver });
    expect(wrapped.cause).toBe(driver);
    expect(wrapped.message).toBe('nestjs-pg-idempotency: the pool is closed');
  });

  it('a statement that does not answer in its bound rejects with StatementTimeoutError, naming it, and its connection is given up', async () => {
    let gaveUp = false;
    const never = new Promise<never>(() => undefined);
    const timedOut = givenUpAfter('a sweep batch', { timeoutMs: 10 }, never, () => (gaveUp = true));
    await expect(timedOut).rejects.toBeInstanceOf(StatementTimeoutError);
    await expect(timedOut).rejects.toThrow('a sweep batch did not answer within 10 ms');
    expect(gaveUp).toBe(true);
  });
});
