import {
  type EntitySubscriberInterface,
  EventSubscriber,
  type TransactionCommitEvent,
  type TransactionRollbackEvent,
} from 'typeorm';

/** Counts the commits and rollbacks TypeORM announces to subscribers (apps publish events from these hooks). */
@EventSubscriber()
export class CommitCounter implements EntitySubscriberInterface {
  static commits = 0;
  static rollbacks = 0;

  afterTransactionCommit(_event: TransactionCommitEvent): void {
    CommitCounter.commits++;
  }

  afterTransactionRollback(_event: TransactionRollbackEvent): void {
    CommitCounter.rollbacks++;
  }
}
