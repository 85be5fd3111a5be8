import { type OutboxMessage, type OutboxPublisher } from '../options/outbox-options.js';
import { OutboxPublishError } from './outbox-publish.error.js';

/**
 * `publisher.publish(message)`, given up (rejected) once it has not settled within `ms`: past the
 * claim another relay may publish the message, and this relay must not mark it sent after that.
 */
export function publishedWithin(publisher: OutboxPublisher, message: OutboxMessage, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const givenUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutboxPublishError(`the broker did not confirm within ${ms} ms`)), ms);
  });
  let publishing: Promise<void>;
  try {
    publishing = Promise.resolve(publisher.publish(message));
  } catch (error) {
    publishing = Promise.reject(error);
  }
  return Promise.race([publishing, givenUp]).finally(() => clearTimeout(timer));
}
