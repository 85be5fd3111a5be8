import { Inject, Injectable } from '@nestjs/common';
import { DatabaseHost } from '../../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import { type KeyStorage, scopeKey } from '../../key/scoped-key.js';
import { KeyReserver } from '../../core/reserve/key-reserver.js';
import { type InProgressKey, KeyConsole, type KeyQuery, type KeyReport, type StateCount } from './key-console.js';

/** How long one console statement may take. */
const CONSOLE_TIMEOUT = { timeoutMs: 10_000 };

/**
 * The key console as a service, for an app to expose to its own admin (behind its own guard):
 * look a key up by caller and key, list lease-mode keys in progress longer than a while, expire
 * one key, count rows by state. It shows no stored body nor header. `npx nestjs-pg-idempotency
 * keys …` does the same from a shell (docs/operations.md).
 */
@Injectable()
export class IdempotencyKeyConsole {
  private readonly console: KeyConsole;
  private readonly storage: KeyStorage;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) settings: { readonly keyStorage: KeyStorage },
    @Inject(DatabaseHost) host: DatabaseHost,
    private readonly reserver: KeyReserver,
  ) {
    this.storage = settings.keyStorage;
    this.console = new KeyConsole(
      (statement) => host.runAlone('the key console', statement, CONSOLE_TIMEOUT),
      settings.keyStorage,
    );
  }

  lookup(query: KeyQuery): Promise<KeyReport[]> {
    return this.console.lookup(query);
  }

  inProgress(olderThanMs: number, limit?: number): Promise<InProgressKey[]> {
    return this.console.inProgress(olderThanMs, limit);
  }

  /**
   * Expires the key, and forgets its outcome in this instance's replay cache; other instances read
   * the table again within `replayCache.maxAge` (one minute by default).
   */
  async expire(query: KeyQuery): Promise<KeyReport> {
    const row = await this.console.expire(query);
    const endpoint = this.storage === 'clear' ? row.endpoint : query.endpoint;
    if (endpoint !== undefined) this.reserver.evict(scopeKey(query.key, query.caller, endpoint));
    return row;
  }

  counts(): Promise<StateCount[]> {
    return this.console.counts();
  }
}
