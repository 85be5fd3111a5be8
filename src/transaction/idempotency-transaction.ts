import { Injectable } from '@nestjs/common';
import type { EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';
import { IdempotencyStore } from '../store/idempotency.store.js';
import { transactionContext } from './transaction-context.js';

/**
 * The transaction an `@Idempotent()` handler runs in. Inject it wherever business writes are
 * made (controller, service, repository class): inside an idempotent request, `manager` is the
 * EntityManager of the transaction that reserved the key, so the writes commit or roll back
 * together with the key; anywhere else it is the DataSource's plain manager.
 *
 * ```ts
 * constructor(private readonly tx: IdempotencyTransaction) {}
 * create(dto) { return this.tx.getRepository(Payment).save(dto); }
 * ```
 */
@Injectable()
export class IdempotencyTransaction {
  constructor(private readonly store: IdempotencyStore) {}

  /** The key's EntityManager inside an idempotent request, else the DataSource's manager. */
  get manager(): EntityManager {
    return transactionContext.getStore() ?? this.store.dataSource.manager;
  }

  /** Whether the calling code runs inside an idempotent request's transaction. */
  get isActive(): boolean {
    return transactionContext.getStore() !== undefined;
  }

  /** A repository bound to {@link manager}. */
  getRepository<Entity extends ObjectLiteral>(target: EntityTarget<Entity>): Repository<Entity> {
    return this.manager.getRepository(target);
  }
}
