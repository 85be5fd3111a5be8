export { IdempotencyModule } from './idempotency.module.js';
export { Idempotent } from './idempotent.decorator.js';
export { IdempotencyInterceptor } from './idempotency.interceptor.js';
export {
  type CallerResolver,
  DEFAULT_MAX_RESPONSE_BYTES,
  defaultStorePolicy,
  type IdempotencyMode,
  type IdempotencyModuleOptions,
  type IdempotentRouteOptions,
  REPLAYED_HEADERS,
  type StorePolicy,
} from './idempotency.options.js';
export { REPLAYED_HEADER } from './idempotency.constants.js';
export {
  type CorsHeaderOptions,
  IDEMPOTENCY_CORS_ALLOWED_HEADERS,
  IDEMPOTENCY_CORS_EXPOSED_HEADERS,
  withIdempotencyCors,
} from './idempotency.cors.js';
export { IdempotencyConfigurationError, NotAnHttpRouteError, UnreplayableRouteError } from './idempotency.errors.js';
export { IdempotencyProblem, PROBLEM_CONTENT_TYPE, type ProblemDetails, ProblemType } from './problems.js';
export type { Duration } from './key/duration.js';
export { canonicalJson, type FingerprintOption, type FingerprintRequest } from './key/fingerprint.js';
export type { KeyFormat } from './key/key-format.js';
export { IdempotencyStore } from './store/idempotency.store.js';
export type { IdempotencyEvent } from './events/idempotency-event.js';
export { IdempotencyEvents, type IdempotencyEventListener } from './events/idempotency-events.js';
export type { ReplayCacheOptions } from './store/local-keys.js';
export { IdempotencySweeper, type SweepResult } from './store/idempotency.sweeper.js';
export { IdempotencyTransaction } from './transaction/idempotency-transaction.js';
export { IdempotencyManager } from './transaction/idempotency-manager.decorator.js';
export { CreateIdempotencyKeys1795996800000 } from './migrations/create-idempotency-keys.migration.js';
export { CREATE_IDEMPOTENCY_KEYS, DROP_IDEMPOTENCY_KEYS } from './migrations/idempotency-keys.schema.js';
