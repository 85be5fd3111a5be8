import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';
import { DatabaseHost } from '../../hosts/database-host.js';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import { deriveDownstreamKey } from '../../key/downstream-key.js';
import { executionContext } from '../../hosts/execution-context.js';

/**
 * The transaction and key an `@Idempotent()` handler runs with. Inject it wherever business
 * writes are made (controller, service, repository class): inside a transactional-mode request,
 * `manager` is the EntityManager of the transaction that reserved the key, so the writes commit
 * or roll back together with the key; anywhere else (lease mode included) it is the DataSource's
 * plain manager.
 *
 * ```ts
 * constructor(private readonly tx: IdempotencyTransaction) {}
 * create(dto) { return this.tx.getRepository(Payment).save(dto); }
 * ```
 *
 * A library that requires the other build of the package (CommonJS beside the app's ESM, or the
 * other way round) lists its copy of `IdempotencyTransaction` in its own module's providers: it
 * resolves the app's database and sees the same key transactions.
 */
@Injectable()
export class IdempotencyTransaction {
  constructor(@Inject(DatabaseHost) private readonly database: DatabaseHost) {}

  /** The key's EntityManager inside a transactional-mode request, else the DataSource's manager. */
  get manager(): EntityManager {
    const manager = executionContext.getStore()?.handle ?? this.database.defaultHandle;
    if (manager === undefined) {
      throw new IdempotencyConfigurationError(
        'IdempotencyTransaction serves apps on TypeORM; this app runs the module on a node-postgres pool (the "pool" option): write through IdempotentDrizzle (nestjs-pg-idempotency/drizzle)',
      );
    }
    return manager as EntityManager;
  }

  /** Whether the calling code runs inside a transactional-mode request's transaction. */
  get isActive(): boolean {
    return executionContext.getStore()?.handle !== undefined;
  }

  /** A repository bound to {@link manager}. */
  getRepository<Entity extends ObjectLiteral>(target: EntityTarget<Entity>): Repository<Entity> {
    return this.manager.getRepository(target);
  }

  /**
   * The idempotency key to send to a downstream provider for the call named `name`, derived from
   * this request's scoped key: stable across retries and lease takeovers. Throws outside an
   * idempotent request.
   */
  downstreamKey(name: string): string {
    const execution = executionContext.getStore();
    if (!execution) {
      throw new IdempotencyConfigurationError(
        'downstreamKey() is only available inside an @Idempotent() request with a key, or a call of IdempotencyService.run()',
      );
    }
    return deriveDownstreamKey(execution.scope, name);
  }
}
