import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { PgPoolHost } from './hosts/pg/pool-host.js';
import { IdempotencyEvents } from './observe/events/idempotency-events.js';
import { PrometheusMetrics } from './observe/events/prometheus-metrics.js';
import { DatabaseHost } from './hosts/database-host.js';
import { TypeOrmHost } from './hosts/typeorm/typeorm-host.js';
import { IDEMPOTENCY_SETTINGS } from './idempotency.constants.js';
import { HttpEntry } from './http/http-entry.js';
import { GraphqlEntry } from './graphql/graphql-entry.js';
import { IdempotentMutations } from './graphql/idempotent-mutations.js';
import { IdempotencyInterceptor } from './bootstrap/idempotency.interceptor.js';
import { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN, type OPTIONS_TYPE } from './idempotency.module-definition.js';
import { IdempotentRoutes } from './http/idempotent-routes.js';
import type { IdempotencyModuleOptions } from './options/module-options.js';
import { type IdempotencySettings, resolveModuleOptions } from './options/settings.js';
import { IdempotencyKeyConsole } from './operations/console/idempotency-key-console.js';
import { KeyDrain } from './core/gates/key-drain.js';
import { IdempotencyTelemetry } from './observe/telemetry/idempotency-telemetry.js';
import { IdempotencyResealer } from './operations/reseal/idempotency-resealer.js';
import { KeyReserver } from './core/reserve/key-reserver.js';
import { RetryAfterEstimate } from './http/retry-after.js';
import { IdempotentMessageHandlers } from './messages/idempotent-message-handlers.js';
import { IdempotentMessages } from './messages/idempotent-messages.js';
import { MessageEntry } from './messages/message-entry.js';
import { IdempotentMessageInterceptor } from './messages/message.interceptor.js';
import { MessageRunner } from './messages/message-run.js';
import { KeyTable } from './store/table/key-table.js';
import { ExactlyOnce } from './core/exactly-once.js';
import { IdempotencyService } from './core/idempotency.service.js';
import { KeyTtls } from './core/key-ttls.js';
import { ModuleReadiness } from './core/gates/module-readiness.js';
import { IdempotentRoutesExplorer } from './bootstrap/idempotent-routes.explorer.js';
import { IdempotencySweeper } from './operations/sweeper/idempotency.sweeper.js';
import { KeyPartitions } from './operations/sweeper/key-partitions.js';
import { IdempotencyTransaction } from './tools/typeorm/idempotency-transaction.js';
import { IdempotencyOutbox } from './outbox/idempotency-outbox.js';
import { OutboxRelay } from './outbox/outbox-relay.js';
import { IdempotencyOutboxConsole } from './operations/console/idempotency-outbox-console.js';
import { IdempotencyGaugesReader } from './operations/gauges/idempotency-gauges.reader.js';

/**
 * Exactly-once work over PostgreSQL, for every entry: `@Idempotent()` routes (POST, PUT, PATCH,
 * DELETE) and GraphQL mutations, `@IdempotentMessage()` handlers, `@IdempotentJob()` processors and
 * `IdempotencyService.run()`. Import it once, with the app's database: TypeORM's DataSource (the
 * default, `TypeOrmModule.forRoot()` imported too) or a node-postgres `pool`:
 *
 * ```ts
 * imports: [TypeOrmModule.forRoot({ ... }), IdempotencyModule.forRoot({ ttl: '24h' })]
 * ```
 * then run the shipped migration (`npx nestjs-pg-idempotency migrate`) and mark the handlers.
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
    HttpEntry,
    IdempotentMutations,
    GraphqlEntry,
    IdempotencyInterceptor,
    IdempotentRoutesExplorer,
    IdempotencyEvents,
    PrometheusMetrics,
    IdempotentMessageHandlers,
    MessageRunner,
    MessageEntry,
    IdempotentMessages,
    IdempotentMessageInterceptor,
    IdempotencyResealer,
    KeyDrain,
    RetryAfterEstimate,
    IdempotencyKeyConsole,
    IdempotencyTelemetry,
    OutboxRelay,
    IdempotencyOutbox,
    IdempotencyOutboxConsole,
    IdempotencyGaugesReader,
  ],
  // What apps inject, and what the module's own integrations (tools/, terminus) inject: the
  // interceptors reach the entries through ModuleRef, so nothing else need leave the module.
  exports: [
    IdempotencyService,
    IdempotencyOutbox,
    OutboxRelay,
    IdempotencyOutboxConsole,
    IdempotencyTransaction,
    IdempotentMessages,
    IdempotencyEvents,
    IdempotencySweeper,
    IdempotencyResealer,
    IdempotencyKeyConsole,
    IdempotencyGaugesReader,
    IdempotencyInterceptor,
    IdempotentMessageInterceptor,
    IDEMPOTENCY_SETTINGS,
    DatabaseHost,
    KeyTable,
  ],
})
export class IdempotencyModule extends ConfigurableModuleClass {
  /** The module with `options` (every one has a default: `forRoot()` takes them all). */
  static override forRoot(options: typeof OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }
}
