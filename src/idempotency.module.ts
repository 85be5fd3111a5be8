import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { PgPoolHost } from './hosts/pg/pool-host.js';
import { IdempotencyEvents } from './events/idempotency-events.js';
import { PrometheusMetrics } from './events/prometheus-metrics.js';
import { DatabaseHost } from './hosts/database-host.js';
import { TypeOrmHost } from './hosts/typeorm/typeorm-host.js';
import { IDEMPOTENCY_SETTINGS } from './idempotency.constants.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN, type OPTIONS_TYPE } from './idempotency.module-definition.js';
import { IdempotentRoutes } from './options/idempotent-routes.js';
import type { IdempotencyModuleOptions } from './options/module-options.js';
import { type IdempotencySettings, resolveModuleOptions } from './options/settings.js';
import { IdempotencyKeyConsole } from './console/idempotency-key-console.js';
import { KeyDrain } from './drain/key-drain.js';
import { IdempotencyTelemetry } from './telemetry/idempotency-telemetry.js';
import { IdempotencyResealer } from './reseal/idempotency-resealer.js';
import { KeyReserver } from './reserve/key-reserver.js';
import { RetryAfterEstimate } from './reserve/retry-after.js';
import { IdempotentMessageHandlers } from './message/idempotent-message-handlers.js';
import { IdempotentMessages } from './message/idempotent-messages.js';
import { IdempotentMessageInterceptor } from './message/message.interceptor.js';
import { MessageRunner } from './message/message-run.js';
import { KeyTable } from './table/key-table.js';
import { ExactlyOnce } from './core/exactly-once.js';
import { IdempotencyService } from './core/idempotency.service.js';
import { KeyTtls } from './core/key-ttls.js';
import { ModuleReadiness } from './core/module-readiness.js';
import { IdempotentRoutesExplorer } from './route-check/idempotent-routes.explorer.js';
import { IdempotencySweeper } from './sweeper/idempotency.sweeper.js';
import { KeyPartitions } from './sweeper/key-partitions.js';
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
    {
      provide: DatabaseHost,
      useFactory: (settings: IdempotencySettings, moduleRef: ModuleRef) =>
        settings.pool ? new PgPoolHost(settings) : new TypeOrmHost(settings, moduleRef),
      inject: [IDEMPOTENCY_SETTINGS, ModuleRef],
    },
    IdempotentRoutes,
    KeyTtls,
    ModuleReadiness,
    ExactlyOnce,
    IdempotencyService,
    KeyTable,
    KeyReserver,
    KeyPartitions,
    IdempotencySweeper,
    IdempotencyTransaction,
    IdempotencyInterceptor,
    IdempotentRoutesExplorer,
    IdempotencyEvents,
    PrometheusMetrics,
    IdempotentMessageHandlers,
    MessageRunner,
    IdempotentMessages,
    IdempotentMessageInterceptor,
    IdempotencyResealer,
    KeyDrain,
    RetryAfterEstimate,
    IdempotencyKeyConsole,
    IdempotencyTelemetry,
  ],
  exports: [
    IDEMPOTENCY_SETTINGS,
    IdempotencyService,
    DatabaseHost,
    IdempotentRoutes,
    KeyReserver,
    IdempotencySweeper,
    IdempotencyTransaction,
    IdempotencyInterceptor,
    IdempotencyEvents,
    IdempotentMessageHandlers,
    MessageRunner,
    IdempotentMessages,
    IdempotentMessageInterceptor,
    IdempotencyResealer,
    KeyDrain,
    KeyTable,
    IdempotencyKeyConsole,
    RetryAfterEstimate,
    IdempotencyTelemetry,
  ],
})
export class IdempotencyModule extends ConfigurableModuleClass {
  /** The module with `options` (every one has a default: `forRoot()` takes them all). */
  static override forRoot(options: typeof OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }
}
