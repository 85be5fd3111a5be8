import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource, type QueryRunner } from 'typeorm';
import { IDEMPOTENCY_SETTINGS } from '../idempotency.constants.js';
import type { IdempotencySettings } from '../idempotency.options.js';
import type { StoredResponse } from '../response/stored-response.js';
import { IdempotencyConfigurationError } from '../idempotency.errors.js';
import { KeyTransaction } from './key-transaction.js';
import { rollbackAndRelease } from './release-query-runner.js';
import { scopeLockId, type KeyScope } from './key-scope.js';
import type { Reservation } from './reservation.js';
import { RECORD, RESERVE } from './store.sql.js';

interface ReserveRow {
  acquired: boolean | null;
  reserved: boolean;
  fingerprint: Buffer | null;
  state: 'in_progress' | 'completed' | null;
  status: number | null;
  response_headers: [string, string][] | null;
  response_body: Buffer | null;
}

/**
 * The PostgreSQL side of the module: reserves keys inside the transaction that will carry the
 * handler's business writes, and records outcomes. Every method is one or two statements.
 */
@Injectable()
export class IdempotencyStore implements OnModuleInit {
  private source?: DataSource;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: IdempotencySettings,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    this.source = this.resolveDataSource();
  }

  /** The DataSource holding `idempotency_keys` and the business tables. */
  get dataSource(): DataSource {
    return (this.source ??= this.resolveDataSource());
  }

  /**
   * Opens a transaction and reserves `scope` in it with `INSERT … ON CONFLICT`. Unless the
   * result is `reserved`, the transaction is already closed and its connection released.
   */
  async reserve(scope: KeyScope, fingerprint: Buffer, ttlMs: number): Promise<Reservation> {
    const queryRunner = this.dataSource.createQueryRunner('master');
    try {
      await queryRunner.startTransaction();
      const params = [scopeLockId(scope), scope.key, scope.caller, scope.endpoint, fingerprint, ttlMs];
      let row = await this.reserveRow(queryRunner, params);
      // The holder committed between this statement's snapshot and its lock: look again.
      if (row.acquired && !row.reserved && !row.state) row = await this.reserveRow(queryRunner, params);
      if (row.reserved) return { kind: 'reserved', transaction: new KeyTransaction(queryRunner, scope) };
      await rollbackAndRelease(queryRunner);
      if (!row.state || !row.fingerprint) return { kind: 'in-progress' };
      if (!row.fingerprint.equals(fingerprint)) return { kind: 'mismatch' };
      if (row.state !== 'completed') return { kind: 'in-progress' };
      return {
        kind: 'completed',
        response: { status: row.status!, headers: row.response_headers ?? [], body: row.response_body ?? Buffer.alloc(0) },
      };
    } catch (error) {
      await rollbackAndRelease(queryRunner);
      throw error;
    }
  }

  /**
   * Stores an outcome in its own short transaction, for a handler whose own transaction was
   * rolled back (a deterministic 4xx it threw). A no-op when another request took the key
   * meanwhile or a live row exists.
   */
  async record(scope: KeyScope, fingerprint: Buffer, ttlMs: number, response: StoredResponse): Promise<void> {
    await this.dataSource.query(RECORD, [
      scopeLockId(scope), scope.key, scope.caller, scope.endpoint, fingerprint, ttlMs,
      response.status, JSON.stringify(response.headers), response.body,
    ]);
  }

  private async reserveRow(queryRunner: QueryRunner, params: unknown[]): Promise<ReserveRow> {
    const rows: ReserveRow[] = await queryRunner.query(RESERVE, params);
    return rows[0];
  }

  private resolveDataSource(): DataSource {
    const { dataSource } = this.settings;
    if (dataSource instanceof DataSource) return dataSource;
    try {
      return this.moduleRef.get<DataSource>(getDataSourceToken(dataSource), { strict: false });
    } catch {
      throw new IdempotencyConfigurationError(
        `no TypeORM DataSource named "${dataSource}" was found. Import TypeOrmModule.forRoot() ` +
          `(with that name) before IdempotencyModule, or pass { dataSource } to IdempotencyModule.forRoot().`,
      );
    }
  }
}
