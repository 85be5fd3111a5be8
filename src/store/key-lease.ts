import type { DataSource } from 'typeorm';
import type { StoredResponse } from '../response/stored-response.js';
import type { Completion, KeyHold, KeyRequest } from './key-hold.js';
import { COMPLETE_LEASE, RELEASE_LEASE } from './store.sql.js';

/**
 * Lease mode's hold: a committed `in_progress` row with `locked_until` and a fencing token.
 * Nothing holds a connection while the handler runs. The outcome is recorded, or the key
 * released, only while the row still carries this hold's token: a holder whose lease was taken
 * over can never overwrite or delete the newer holder's row.
 */
export class KeyLease implements KeyHold {
  private ended = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly request: KeyRequest,
    /** The fencing token written with the reservation. */
    readonly token: string,
  ) {}

  get isOpen(): boolean {
    return !this.ended;
  }

  async complete(response: StoredResponse): Promise<Completion> {
    if (this.ended) return 'skipped';
    this.ended = true;
    const { key, caller, endpoint } = this.request.scope;
    const [, updated]: [unknown, number] = await this.dataSource.query(COMPLETE_LEASE, [
      key, caller, endpoint, this.token, response.status, JSON.stringify(response.headers), response.body,
    ]);
    return updated === 1 ? 'recorded' : 'lost';
  }

  async release(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const { key, caller, endpoint } = this.request.scope;
    await this.dataSource.query(RELEASE_LEASE, [key, caller, endpoint, this.token]);
  }
}
