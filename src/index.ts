export { IdempotencyModule } from './idempotency.module.js';
export { Idempotent } from './idempotent.decorator.js';
export { IdempotencyInterceptor } from './idempotency.interceptor.js';
export { type IdempotentCall, type IdempotentCallResult, IdempotencyService } from './core/idempotency.service.js';
export type { RunOutcome, UnavailableReason } from './core/run-outcome.js';
export type { ExecutionOptions } from './options/execution-settings.js';
export type {
  CallerResolver,
  DataSourceLike,
  IdempotencyMode,
  IdempotencyModuleOptions,
  IdempotentRouteOptions,
  OutcomeEncryptionKey,
  PgPoolLike,
  RedactionOptions,
  ReplayCacheOptions,
  StorageOptions,
  StorePolicy,
} from './options/module-options.js';
export { DEFAULT_MAX_RESPONSE_BYTES, defaultStorePolicy, REPLAYED_HEADERS } from './options/defaults.js';
export { REPLAYED_HEADER } from './idempotency.constants.js';
export {
  type CorsHeaderOptions,
  IDEMPOTENCY_CORS_ALLOWED_HEADERS,
  IDEMPOTENCY_CORS_EXPOSED_HEADERS,
  withIdempotencyCors,
} from './idempotency.cors.js';
export { IdempotencyConfigurationError, NotAnHttpRouteError, UnreplayableRouteError } from './idempotency.errors.js';
export { IdempotencyProblem, PROBLEM_CONTENT_TYPE, type ProblemDetails, ProblemType } from './problems.js';
export type { Duration } from './options/duration.js';
export { canonicalJson, type FingerprintOption, type FingerprintRequest } from './parse/fingerprint.js';
export type { KeyFormat } from './parse/key-format.js';
export type { IdempotencyEvent } from './events/idempotency-event.js';
export { IdempotencyEvents, type IdempotencyEventListener } from './events/idempotency-events.js';
export { IdempotencySweeper, type SweepResult } from './sweeper/idempotency.sweeper.js';
export { IdempotencyTransaction } from './transaction/idempotency-transaction.js';
export { IdempotencyManager } from './transaction/idempotency-manager.decorator.js';
export { CreateIdempotencyKeys1795996800000 } from './migrations/create-idempotency-keys.migration.js';
export { CREATE_IDEMPOTENCY_KEYS, DROP_IDEMPOTENCY_KEYS } from './migrations/idempotency-keys.schema.js';
export { CreatePartitionedIdempotencyKeys1795996800000 } from './migrations/create-partitioned-idempotency-keys.migration.js';
export { CREATE_PARTITIONED_IDEMPOTENCY_KEYS } from './migrations/idempotency-keys-partitioned.schema.js';
export { DigestIdempotencyKeys1796169600000 } from './migrations/digest-idempotency-keys.migration.js';
export { DIGEST_IDEMPOTENCY_KEYS } from './migrations/digest-idempotency-keys.schema.js';
export { IdempotencyResealer, type ResealOptions, type ResealReport } from './reseal/idempotency-resealer.js';
export { UnreadableOutcomeError } from './protect/unreadable-outcome.error.js';
export { IdempotencyKeyConsole } from './console/idempotency-key-console.js';
export { type InProgressKey, KeyConsoleInputError, KeyNotFoundError, type KeyQuery, type KeyReport, type StateCount } from './console/key-console.js';
export type { KeyStorage } from './parse/scoped-key.js';
export { IdempotentMessage } from './message/idempotent-message.decorator.js';
export type { IdempotentMessageOptions } from './message/message-options.js';
export type { ReceivedMessage } from './message/received-message.js';
export type { MessageOutcome, Settlement } from './message/message-outcome.js';
export { settlementOf } from './message/message-outcome.js';
export { type ConsumedMessage, type ConsumeOptions, IdempotentMessages } from './message/idempotent-messages.js';
export type { MessageDelivery } from './message/transports/message-delivery.js';
export { type AmqpChannel, type AmqpMessage, ATTEMPT_HEADER, rmqDelivery } from './message/transports/rmq-delivery.js';
