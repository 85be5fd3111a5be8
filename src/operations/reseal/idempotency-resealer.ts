import { Inject, Injectable, Logger } from '@nestjs/common';
import { DatabaseHost } from '../../hosts/database-host.js';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import { KEY_DIGEST_PREFIX, type KeyStorage, scopeKey } from '../../key/scoped-key.js';
import type { OutcomeOwner, StoredOutcomes } from '../../store/protect/stored-outcomes.js';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import { RESEAL_BATCH, UNSEALED_BATCH } from './reseal.sql.js';
import { SealedOutcomes } from '../../store/protect/sealed-outcomes.js';
import { UnreadableOutcomeError } from '../../store/protect/unreadable-outcome.error.js';

/** What one resealing run did. */
export interface ResealReport {
  /** Rows now sealed with the current key (in clear before, or sealed with an older one). */
  resealed: number;
  /** Rows that cannot be opened (an unlisted key id, a failed tag), left as they are and logged. */
  unreadable: number;
  /** Rows that changed between their read and their write (taken over, swept), left to the new writer. */
  skipped: number;
}

/** Options of one resealing run. */
export interface ResealOptions {
  /** Rows read and written per statement. Default: `500`. */
  batchSize?: number;
}

interface UnsealedRow {
  key: string;
  caller: string;
  endpoint: string;
  fingerprint: Buffer;
  status: number;
  response_headers: unknown;
  response_body: Buffer | null;
}

/** What resealing reads of the module's settings (`IdempotencySettings` has it). */
interface StorageSettings {
  readonly keyStorage: KeyStorage;
  readonly outcomes: StoredOutcomes;
}

const logger = new Logger('IdempotencyResealer');

/** How long one batch's statement may take. */
const BATCH_TIMEOUT = { timeoutMs: 60_000 };

/**
 * Seals every completed row with the current key of `storage.encryption.keys`: rows written in
 * clear before encryption was turned on, and rows sealed with a key that is being retired. Run it
 * after putting a new key first (from a script, a scheduled job, an admin route); once it reports
 * no unreadable rows, older keys can be removed. Each batch is written only where a row still
 * holds what was read, so it runs safely beside live traffic and beside another run. A run in
 * progress in this process is joined, never started twice.
 */
@Injectable()
export class IdempotencyResealer {
  private running?: Promise<ResealReport>;

  constructor(
    @Inject(IDEMPOTENCY_SETTINGS) private readonly settings: StorageSettings,
    @Inject(DatabaseHost) private readonly host: DatabaseHost,
  ) {}

  reseal(options: ResealOptions = {}): Promise<ResealReport> {
    this.running ??= this.run(options).finally(() => (this.running = undefined));
    return this.running;
  }

  private async run({ batchSize = 500 }: ResealOptions): Promise<ResealReport> {
    const outcomes = this.settings.outcomes;
    if (!(outcomes instanceof SealedOutcomes)) {
      throw new IdempotencyConfigurationError(
        'resealing needs storage.encryption.keys: with none, outcomes are stored in clear',
      );
    }
    const current = outcomes.currentKeyId;
    const report: ResealReport = { resealed: 0, unreadable: 0, skipped: 0 };
    let after: [string, string, string] | [null, null, null] = [null, null, null];
    for (;;) {
      const { rows } = await this.host.runAlone(
        'reading rows to reseal',
        [UNSEALED_BATCH, [current, batchSize, ...after]],
        BATCH_TIMEOUT,
      );
      if (rows.length === 0) return report;
      const batch: object[] = [];
      for (const row of rows as UnsealedRow[]) {
        const owner = this.ownerOf(row);
        try {
          const [headers, body] = outcomes.columns(outcomes.read(row, owner), owner, row.fingerprint);
          const was = (row.response_body ?? Buffer.alloc(0)).toString('hex');
          batch.push({
            key: row.key,
            caller: row.caller,
            endpoint: row.endpoint,
            headers: JSON.parse(headers),
            body: body.toString('hex'),
            was,
          });
        } catch (error) {
          if (!(error instanceof UnreadableOutcomeError)) throw error;
          report.unreadable++;
          logger.error(`a row was not resealed: ${error.message}`);
        }
      }
      if (batch.length > 0) {
        const {
          rows: [written],
        } = await this.host.runAlone('resealing rows', [RESEAL_BATCH, [JSON.stringify(batch)]], BATCH_TIMEOUT);
        report.resealed += written.resealed;
        report.skipped += batch.length - written.resealed;
      }
      const last = rows[rows.length - 1] as UnsealedRow;
      after = [last.key, last.caller, last.endpoint];
      if (rows.length < batchSize) return report;
    }
  }

  /** The digests a row's sealed outcome is bound to, from its scope's columns as `storage.keys` writes them. */
  private ownerOf({ key, caller, endpoint }: UnsealedRow): OutcomeOwner {
    if (
      this.settings.keyStorage === 'digest' &&
      caller === '' &&
      key.startsWith(KEY_DIGEST_PREFIX) &&
      endpoint.startsWith(KEY_DIGEST_PREFIX)
    ) {
      return {
        digest: Buffer.from(key.slice(KEY_DIGEST_PREFIX.length), 'hex'),
        endpointDigest: Buffer.from(endpoint.slice(KEY_DIGEST_PREFIX.length), 'hex'),
      };
    }
    return scopeKey(key, caller, endpoint);
  }
}
