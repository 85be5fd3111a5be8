import type { EntityManager, QueryRunner } from 'typeorm';
import type { StoredResponse } from '../response/stored-response.js';
import type { KeyScope } from './key-scope.js';
import { rollbackAndRelease } from './release-query-runner.js';
import { COMPLETE } from './store.sql.js';

/**
 * The database transaction that reserved a key. The handler's business writes go through
 * `manager`; `complete()` records the outcome and commits both together, `rollback()` undoes
 * both and frees the key. The first of the two to be called ends it and returns the
 * connection to the pool; later calls do nothing.
 */
export class KeyTransaction {
  private ended = false;

  constructor(
    private readonly queryRunner: QueryRunner,
    readonly scope: KeyScope,
  ) {}

  get manager(): EntityManager {
    return this.queryRunner.manager;
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  async complete(response: StoredResponse): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      const { key, caller, endpoint } = this.scope;
      await this.queryRunner.query(COMPLETE, [
        key, caller, endpoint, response.status, JSON.stringify(response.headers), response.body,
      ]);
      await this.queryRunner.commitTransaction();
    } catch (error) {
      await rollbackAndRelease(this.queryRunner);
      throw error;
    }
    await this.queryRunner.release();
  }

  async rollback(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await rollbackAndRelease(this.queryRunner);
  }
}
