import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import type { PgClient } from '../wire/pg-client.js';
import { transactionCommand } from './transaction-commands.js';

const KEY_CLIENT = Symbol.for('nestjs-pg-idempotency.key-client');

/** Whether `handle` is a `KeyClient` (of either build of the package). */
export function isKeyClient(handle: unknown): handle is KeyClient {
  return typeof handle === 'object' && handle !== null && (handle as { [KEY_CLIENT]?: unknown })[KEY_CLIENT] === true;
}

/** What a node-postgres `PoolClient` is used for by the tools a handler writes with (Drizzle). */
interface QueryingClient extends PgClient {
  query(config: unknown, values?: unknown, callback?: unknown): any;
}

/**
 * The handler's database handle on the node-postgres host: a pooled connection, as a client that
 * tools given it (Drizzle's `drizzle({ client })`, or the app's own SQL) can run their queries on
 * while it carries a key's transaction, but that keeps that transaction the module's. There is one
 * per pooled connection (so that a tool's object built over it serves every key transaction the
 * connection carries); a query is run only from inside the key transaction it carries now (code
 * left running by an earlier request is refused). A transaction the tool
 * starts (`BEGIN`) becomes a savepoint of the key's transaction, and its `COMMIT` or `ROLLBACK`
 * releases or rolls back to that savepoint; a `COMMIT` or `ROLLBACK` of the key's transaction
 * itself, any other transaction command (`COMMIT AND CHAIN`, `PREPARE TRANSACTION`), a transaction
 * command among several statements of one query, an isolation level, `release()` and `end()` are
 * refused, with an error that says why. Once the key's transaction ended, every query is refused.
 */
export class KeyClient {
  /** Marks a key client of either build of the package (ESM, CommonJS). */
  readonly [KEY_CLIENT] = true;
  private readonly savepoints: string[] = [];
  private carrying = false;
  private next = 1;

  private constructor(
    private readonly client: QueryingClient,
    /** Whether the calling code runs inside the key transaction this client carries now. */
    private readonly isCurrent: (client: KeyClient) => boolean,
  ) {}

  private static readonly clients = new WeakMap<object, KeyClient>();

  /** The key client of a pooled connection, now carrying a key transaction. */
  static carrying(client: QueryingClient, isCurrent: (client: KeyClient) => boolean): KeyClient {
    let keyClient = KeyClient.clients.get(client);
    if (!keyClient) KeyClient.clients.set(client, (keyClient = new KeyClient(client, isCurrent)));
    keyClient.carrying = true;
    keyClient.savepoints.length = 0;
    return keyClient;
  }

  /** The key's transaction ended: the client is no longer the handler's. */
  close(): void {
    this.carrying = false;
  }

  query(config: unknown, values?: unknown, callback?: unknown): any {
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | undefined)?.text;
    const refused =
      !this.carrying || !this.isCurrent(this)
        ? refuse(
            "a query from outside the key's transaction (after it ended, or from code an earlier request left running)",
          )
        : typeof text === 'string'
          ? this.control(text)
          : undefined;
    if (refused instanceof Error) {
      if (typeof callback === 'function') return void (callback as (error: Error) => void)(refused);
      if (typeof values === 'function') return void (values as (error: Error) => void)(refused);
      return Promise.reject(refused);
    }
    return this.client.query(refused ?? config, refused ? undefined : values, callback);
  }

  escapeLiteral(value: string): string {
    return this.client.escapeLiteral(value);
  }

  escapeIdentifier(value: string): string {
    return (this.client as unknown as { escapeIdentifier(value: string): string }).escapeIdentifier(value);
  }

  release(): never {
    throw refuse('release()');
  }

  end(): Promise<never> {
    return Promise.reject(refuse('end()'));
  }

  /** The savepoint command a transaction command stands for, a refusal, or nothing (any other query). */
  private control(text: string): string | Error | undefined {
    const command = transactionCommand(text);
    if (!command) return undefined;
    switch (command.kind) {
      case 'refused':
        return refuse(command.why);
      case 'begin': {
        if (/isolation level/i.test(command.rest) && !/isolation level read committed/i.test(command.rest)) {
          return refuse(`a transaction at another isolation level (${text.trim()})`);
        }
        const name = `nestjs_pg_idempotency_tool_${this.next++}`;
        this.savepoints.push(name);
        return `SAVEPOINT ${name}`;
      }
      default: {
        const name = this.savepoints.pop();
        if (!name) return refuse(command.kind === 'commit' ? 'COMMIT' : 'ROLLBACK');
        return command.kind === 'commit' ? `RELEASE SAVEPOINT ${name}` : `ROLLBACK TO SAVEPOINT ${name}`;
      }
    }
  }
}

function refuse(what: string): IdempotencyConfigurationError {
  return new IdempotencyConfigurationError(
    `${what} on the transaction of an @Idempotent() request: the module commits it, with the key, or rolls it back; ` +
      'a transaction started in it is a savepoint of it, and it runs at READ COMMITTED (lock the rows a decision reads, SELECT … FOR UPDATE)',
  );
}
