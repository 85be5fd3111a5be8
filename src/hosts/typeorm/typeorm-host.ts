import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { DataSource, EntityManager } from 'typeorm';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import type { IdempotencySettings } from '../../options/settings.js';
import type { DatabaseFailure } from '../database-failures.js';
import type {
  Bound,
  DatabaseHost,
  HandlerScope,
  OpenedTransaction,
  SqlStatement,
  Statement,
  StatementResult,
} from '../database-host.js';
import { runBounded } from '../wire/bounded-statement.js';
import { OwnPool } from '../wire/own-pool.js';
import type { PgClient } from '../wire/pg-client.js';
import { FailureReading, translated } from '../wire/postgres-failures.js';
import { onceMoreIfVanished, StatementSender } from '../wire/statement-sender.js';
import { resolveDataSource } from './data-source.js';
import { connectTo, ownDataSource } from './own-data-source.js';
import { checkTypeOrmAccess, type TypeOrmAccess } from './self-check.js';
import { type TransactionControl, transactionControl } from './transaction-control.js';
import { guardKeyTransaction } from './transaction-guard.js';
import { typeOrmFailure } from './typeorm-failures.js';
import { endAndRelease, TypeOrmKeyTransaction } from './typeorm-key-transaction.js';

/**
 * The host of a TypeORM DataSource on node-postgres (the default): the key's transaction is a
 * QueryRunner's, and the handler's handle its EntityManager. At bootstrap it resolves the
 * DataSource and checks how it can reach TypeORM's transaction (`self-check.ts`).
 */
@Injectable()
export class TypeOrmHost
  implements DatabaseHost<EntityManager>, OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown
{
  private source?: DataSource;
  private sender!: StatementSender;
  private control!: TransactionControl;
  private ownPool?: OwnPool<DataSource>;
  /** The scopes transaction tools registered, by the DataSource each was given. */
  private readonly scopes = new WeakMap<object, HandlerScope>();
  private readonly failures = new FailureReading(typeOrmFailure);
  /** The app is shutting down: TypeORM may close its pool under key transactions still open. */
  private shuttingDown = false;
  /** How the key's transaction is reached, once checked. */
  access?: TypeOrmAccess;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onModuleInit(): Promise<void> {
    const dataSource = await resolveDataSource(this.settings.dataSource, this.moduleRef);
    this.access = await checkTypeOrmAccess(dataSource, this.settings.typeormAccess);
    this.sender = new StatementSender(this.settings.preparedStatements);
    this.control = transactionControl(this.access, dataSource, this.sender);
    this.ownPool = new OwnPool(ownDataSource(dataSource));
    this.source = dataSource;
  }

  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.ownPool?.close();
  }

  /** The DataSource holding `idempotency_keys` and the business tables. */
  get dataSource(): DataSource {
    if (!this.source)
      throw new IdempotencyConfigurationError(
        'the TypeORM DataSource is not resolved yet (before the module initialised)',
      );
    return this.source;
  }

  /** The handle code gets outside a key transaction: the DataSource's manager. */
  get defaultHandle(): EntityManager {
    return this.dataSource.manager;
  }

  async begin(
    statements: readonly Statement[],
    later: readonly SqlStatement[],
  ): Promise<OpenedTransaction<EntityManager>> {
    try {
      return await onceMoreIfVanished(() => this.open(statements, later));
    } catch (error) {
      throw translated(error, typeOrmFailure);
    }
  }

  runAlone(what: string, statement: Statement, bound: Bound): Promise<StatementResult> {
    return this.runTogether(what, [statement], bound).then(([result]) => result);
  }

  runTogether(what: string, statements: readonly Statement[], bound: Bound): Promise<StatementResult[]> {
    return runBounded(() => connectTo(this.dataSource), this.sender, what, statements, bound);
  }

  runOnOwnPool(what: string, statement: Statement, bound: Bound): Promise<StatementResult> {
    return runBounded(() => this.ownPool!.connect(), this.sender, what, [statement], bound).then(([result]) => result);
  }

  failureOf(error: unknown): DatabaseFailure | undefined {
    return this.failures.failureOf(error);
  }

  readFailuresThrough(unwrap: (error: unknown) => unknown): void {
    this.failures.through(unwrap);
  }

  useHandlerScope(database: object, scope: HandlerScope): void {
    this.scopes.set(database, scope);
  }

  private async open(
    statements: readonly Statement[],
    later: readonly SqlStatement[],
  ): Promise<OpenedTransaction<EntityManager>> {
    const queryRunner = this.dataSource.createQueryRunner('master');
    const connection = { queryRunner, client: undefined as unknown as PgClient };
    try {
      connection.client = (await queryRunner.connect()) as PgClient;
      const results = await this.control.open(connection, statements, later);
      const guard = guardKeyTransaction(queryRunner, connection.client, () => this.shuttingDown);
      const scope = this.scopes.get(this.dataSource);
      return { transaction: new TypeOrmKeyTransaction(connection, this.control, this.sender, guard, scope), results };
    } catch (error) {
      await endAndRelease(connection, this.control, 'rollback', 1).catch(() => undefined);
      throw error;
    }
  }
}
