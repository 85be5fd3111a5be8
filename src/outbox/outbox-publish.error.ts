import { IdempotencyError } from '../idempotency.errors.js';

/**
 * A publish the broker refused, or did not confirm in time, thrown by the module's publishers
 * (RabbitMQ's, JetStream's) and by the relay for a publisher it lacks: the relay tries the message
 * again later.
 */
export class OutboxPublishError extends IdempotencyError {}
