import type { OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit, Provider } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import { IDEMPOTENCY_SETTINGS } from '../../idempotency.constants.js';
import { IdempotencyConfigurationError } from '../../idempotency.errors.js';
import type { IdempotencySettings } from '../../options/settings.js';
import { DatabaseHost, type HandlerScope } from '../../hosts/database-host.js';
import { executionContext } from '../../hosts/execution-context.js';
import { isKeyClient, type KeyClient } from '../../hosts/pg/key-client.js';
import { IdempotentPrismaPg, type PrismaPgOptions } from './idempotent-prisma-pg.js';
import { keyConnectionPool } from './key-connection-pool.js';
import { prismaDriverError } from './prisma-failures.js';
import { checkPrisma, type PrismaClientLike } from './self-check.js';

/** Builds one of the app's Prisma clients on the driver adapter it is given: `(adapter) => new PrismaClient({ adapter })`. */
export type PrismaClientFactory<Client> = (adapter: PrismaPg) => Client;

/**
 * Prisma on the key's transaction. Give the module the node-postgres `Pool` (`pool`), provide
 * this with `idempotentPrisma((adapter) => new PrismaClient({ adapter }))`, and write through
 * `client`: inside an `@Idempotent()` request it is a Prisma client on the key's own connection
 * (`IdempotentPrismaPg`), so every query commits or rolls back with the key, and a `$transaction()`
 * is a savepoint of the key's transaction; anywhere else (lease mode included) it is the app's
 * client, on `PrismaPg` over the same pool.
 *
 * ```ts
 * constructor(private readonly prisma: IdempotentPrisma<PrismaClient>) {}
 * pay(dto) { return this.prisma.client.payment.create({ data: dto }); }
 * ```
 *
 * One client is built per pooled connection that carries key transactions (the first takes tens
 * of milliseconds, then it serves every key transaction on that connection), never per request:
 * Prisma groups some queries of one client across requests, and a client per connection keeps
 * every query of a key's client in that key's transaction. At bootstrap it checks, on a real key
 * transaction rolled back at the end, that its client's statements run in it and are undone with
 * it; the app refuses to start otherwise.
 */
export class IdempotentPrisma<Client extends PrismaClientLike>
  implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown
{
  private app?: Client;
  private readonly bound = new WeakMap<KeyClient, Client>();
  private readonly built = new Set<Client>();

  constructor(
    private readonly host: DatabaseHost,
    /** The module's `pool` option, which the app's client runs on too. */
    private readonly pool: pg.Pool | undefined,
    private readonly create: PrismaClientFactory<Client>,
    private readonly options?: PrismaPgOptions,
  ) {
    host.readFailuresThrough(prismaDriverError);
  }

  /** The client on the key's transaction inside an `@Idempotent()` request, else the app's. */
  get client(): Client {
    const handle = executionContext.getStore()?.handle;
    return isKeyClient(handle) ? this.boundTo(handle) : this.appClient();
  }

  /** Whether `client` is on the key's transaction here. */
  get isActive(): boolean {
    return isKeyClient(executionContext.getStore()?.handle);
  }

  onModuleInit(): void {
    if (!this.pool) {
      throw new IdempotencyConfigurationError(
        "IdempotentPrisma runs on the node-postgres pool the module is given: IdempotencyModule.forRoot({ pool }), the same pool as the app's PrismaPg",
      );
    }
  }

  /**
   * Registers the scope of a transaction tool of the app's that keeps its own current transaction
   * (`IdempotentTransactionalAdapterPrisma` of `nestjs-pg-idempotency/cls`) with the module's host.
   */
  useHandlerScope(scope: HandlerScope): void {
    this.host.useHandlerScope(this.pool ?? {}, scope);
  }

  async onApplicationBootstrap(): Promise<void> {
    await checkPrisma(this.host, (keyClient) => this.boundTo(keyClient));
  }

  async onApplicationShutdown(): Promise<void> {
    const clients = this.app ? [this.app, ...this.built] : [...this.built];
    await Promise.all(clients.map((client) => client.$disconnect().catch(() => undefined)));
  }

  /** The app's client, on `PrismaPg` over the module's pool. */
  private appClient(): Client {
    this.app ??= this.create(new PrismaPg(this.pool!, this.options));
    return this.app;
  }

  private boundTo(keyClient: KeyClient): Client {
    let client = this.bound.get(keyClient);
    if (!client) {
      client = this.create(new IdempotentPrismaPg(keyConnectionPool(keyClient), this.options));
      this.bound.set(keyClient, client);
      this.built.add(client);
    }
    return client;
  }
}

/** Options of `idempotentPrisma()`. */
export interface IdempotentPrismaOptions {
  /** The DI token to provide it under. Default: `IdempotentPrisma`. */
  provide?: unknown;
  /** The options of every `PrismaPg` built (`schema`, `userDefinedTypeParser`, …). */
  prismaPg?: PrismaPgOptions;
}

/**
 * The provider of an `IdempotentPrisma` whose clients `create` builds, on the module's `pool`
 * (`IdempotencyModule.forRoot({ pool })`).
 */
export function idempotentPrisma<Client extends PrismaClientLike>(
  create: PrismaClientFactory<Client>,
  options: IdempotentPrismaOptions = {},
): Provider {
  return {
    provide: (options.provide ?? IdempotentPrisma) as never,
    inject: [DatabaseHost, IDEMPOTENCY_SETTINGS],
    useFactory: (host: DatabaseHost, settings: IdempotencySettings) =>
      new IdempotentPrisma(host, settings.pool as pg.Pool | undefined, create, options.prismaPg),
  };
}
