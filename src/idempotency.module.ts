import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { IdempotencyEvents } from './events/idempotency-events.js';
import { PrometheusMetrics } from './events/prometheus-metrics.js';
import { IDEMPOTENCY_SETTINGS, IDEMPOTENCY_STORE } from './idempotency.constants.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN, type OPTIONS_TYPE } from './idempotency.module-definition.js';
import { type IdempotencyModuleOptions, resolveModuleOptions } from './idempotency.options.js';
import { IdempotentRoutesExplorer } from './route-check/idempotent-routes.explorer.js';
import { IdempotencyStore } from './store/idempotency.store.js';
import { IdempotencySweeper } from './store/idempotency.sweeper.js';
import { IdempotencyTransaction } from './transaction/idempotency-transaction.js';

/**
 * Exactly-once POST/PATCH over PostgreSQL. Import it once, after `TypeOrmModule.forRoot()`:
 *
 * ```ts
 * imports: [TypeOrmModule.forRoot({ ... }), IdempotencyModule.forRoot({ ttl: '24h' })]
 * ```
 * then put `@Idempotent()` on routes and run the shipped migration.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: IDEMPOTENCY_SETTINGS,
      useFactory: (options: IdempotencyModuleOptions) => resolveModuleOptions(options),
      inject: [MODULE_OPTIONS_TOKEN],
    },
    IdempotencyStore,
    { provide: IDEMPOTENCY_STORE, useExisting: IdempotencyStore },
    IdempotencySweeper,
    IdempotencyTransaction,
    IdempotencyInterceptor,
    IdempotentRoutesExplorer,
    IdempotencyEvents,
    PrometheusMetrics,
  ],
  exports: [
    IDEMPOTENCY_SETTINGS,
    IdempotencyStore,
    IDEMPOTENCY_STORE,
    IdempotencySweeper,
    IdempotencyTransaction,
    IdempotencyInterceptor,
    IdempotencyEvents,
  ],
})
export class IdempotencyModule extends ConfigurableModuleClass {
  /** The module with `options` (every one has a default: `forRoot()` takes them all). */
  static override forRoot(options: typeof OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }
}
