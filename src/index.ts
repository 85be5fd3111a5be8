export { IdempotencyModule } from './idempotency.module.js';
export { Idempotent } from './bootstrap/idempotent.decorator.js';
export { IdempotencyInterceptor } from './bootstrap/idempotency.interceptor.js';
export { type IdempotentCall, type IdempotentCallResult, IdempotencyService } from './core/idempotency.service.js';
export type { RunOutcome, Tombstone, UnavailableReason } from './core/run-outcome.js';
export type { ExecutionOptions } from './options/execution-settings.js';
export type {
  CallerResolver,
  DataSourceLike,
  IdempotencyModuleOptions,
  OutcomeEncryptionKey,
  PgPoolLike,
  RedactionOptions,
  ReplayCacheOptions,
  StorageOptions,
  StorePolicy,
} from './options/module-options.js';
export type { IdempotencyMode, IdempotentRouteOptions, KeySource } from './options/route-options.js';
export { DEFAULT_MAX_RESPONSE_BYTES, defaultStorePolicy, REPLAYED_HEADERS } from './options/defaults.js';
export { KEY_EXPIRES_HEADER, REPLAYED_HEADER } from './idempotency.constants.js';
export {
  type CorsHeaderOptions,
  IDEMPOTENCY_CORS_ALLOWED_HEADERS,
  IDEMPOTENCY_CORS_EXPOSED_HEADERS,
  withIdempotencyCors,
} from './http/idempotency.cors.js';
export { IdempotencyConfigurationError, IdempotencyError } from './idempotency.errors.js';
export {
  IdempotentHandlersError,
  MisplacedDecoratorError,
  NotAnHttpRouteError,
  SafeMethodRouteError,
  UnreplayableRouteError,
} from './bootstrap/idempotent-handlers.errors.js';
export { TablesNotMigratedError } from './store/table/tables-not-migrated.error.js';
export { UnrecordableResultError } from './core/unrecordable-result.error.js';
export { IdempotentMutationError, type MutationErrorCode } from './graphql/mutation-error.js';
export {
  IdempotencyProblem,
  PROBLEM_CONTENT_TYPE,
  type ProblemDetails,
  ProblemType,
} from './http/problems/problems.js';
export type { Duration } from './options/duration.js';
export { canonicalJson, type FingerprintOption, type FingerprintRequest } from './key/fingerprint.js';
export type { KeyFormat } from './key/key-format.js';
export type { IdempotencyEvent, IdempotencyGauges, RefusalReason } from './observe/events/idempotency-event.js';
export { IdempotencyEvents, type IdempotencyEventListener } from './observe/events/idempotency-events.js';
export { IdempotencySweeper, type SweepResult } from './operations/sweeper/idempotency.sweeper.js';
export { IdempotencyGaugesReader } from './operations/gauges/idempotency-gauges.reader.js';
export { IdempotencyTransaction } from './tools/typeorm/idempotency-transaction.js';
export { IdempotencyManager } from './tools/typeorm/idempotency-manager.decorator.js';
export { CreateIdempotencyKeys1795996800000 } from './store/migrations/create-idempotency-keys.migration.js';
export {
  ADD_TOMBSTONE_COLUMNS,
  CREATE_IDEMPOTENCY_KEYS,
  DROP_IDEMPOTENCY_KEYS,
} from './store/migrations/idempotency-keys.schema.js';
export { AddIdempotencyTombstones1796860800000 } from './store/migrations/add-idempotency-tombstones.migration.js';
export { CreatePartitionedIdempotencyKeys1795996800000 } from './store/migrations/create-partitioned-idempotency-keys.migration.js';
export { CREATE_PARTITIONED_IDEMPOTENCY_KEYS } from './store/migrations/idempotency-keys-partitioned.schema.js';
export { DigestIdempotencyKeys1796169600000 } from './store/migrations/digest-idempotency-keys.migration.js';
export { DIGEST_IDEMPOTENCY_KEYS } from './store/migrations/digest-idempotency-keys.schema.js';
export { CreateIdempotencyOutbox1796515200000 } from './store/migrations/create-idempotency-outbox.migration.js';
export { CREATE_IDEMPOTENCY_OUTBOX, DROP_IDEMPOTENCY_OUTBOX } from './store/migrations/idempotency-outbox.schema.js';
export {
  IdempotencyResealer,
  type ResealOptions,
  type ResealReport,
} from './operations/reseal/idempotency-resealer.js';
export { UnreadableOutcomeError } from './store/protect/unreadable-outcome.error.js';
export { IdempotencyKeyConsole } from './operations/console/idempotency-key-console.js';
export {
  type InProgressKey,
  KeyConsoleInputError,
  KeyNotFoundError,
  type KeyQuery,
  type KeyReport,
  type StateCount,
} from './operations/console/key-console.js';
export type { KeyStorage } from './key/scoped-key.js';
export { IdempotentMessage } from './messages/idempotent-message.decorator.js';
export { IdempotentJob } from './jobs/idempotent-job.decorator.js';
export type { IdempotentJobOptions, JobLike } from './jobs/idempotent-job.options.js';
export type { IdempotentMessageOptions } from './messages/message-options.js';
export type { ReceivedMessage } from './messages/message/received-message.js';
export type { MessageOutcome, Settlement } from './messages/message/message-outcome.js';
export { settlementOf } from './messages/message/message-outcome.js';
export { type ConsumedMessage, type ConsumeOptions, IdempotentMessages } from './messages/idempotent-messages.js';
export type { MessageDelivery } from './messages/transports/message-delivery.js';
export { type AmqpChannel, type AmqpMessage, ATTEMPT_HEADER, rmqDelivery } from './messages/transports/rmq-delivery.js';
export { IdempotencyOutbox, type OutboxMessageToStage, OutboxStagingError } from './outbox/idempotency-outbox.js';
export { OutboxRelay, type RelayRound } from './outbox/outbox-relay.js';
export type { OutboxMessage, OutboxOptions, OutboxPublisher } from './options/outbox-options.js';
export { OutboxPublishError } from './outbox/outbox-publish.error.js';
export {
  type AmqpConfirmChannel,
  rabbitMqPublisher,
  type RabbitMqPublisherOptions,
} from './outbox/publishers/rabbitmq-publisher.js';
export { IdempotencyOutboxConsole, type UnsentMessage } from './operations/console/idempotency-outbox-console.js';
