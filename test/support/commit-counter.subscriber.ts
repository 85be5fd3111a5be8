import { EventSubscriber, type EntitySubscriberInterface, type TransactionCommitEvent } from 'typeorm';

/** Counts the commits TypeORM announces to subscribers (apps publish events from this hook). */
@EventSubscriber()
export class CommitCounter implements EntitySubscriberInterface {
  static commits = 0;

  afterTransactionCommit(_event: TransactionCommitEvent): void {
    CommitCounter.commits++;
  }
}
