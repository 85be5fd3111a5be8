import {
  ClassSerializerInterceptor,
  type INestApplication,
  Module,
  type ModuleMetadata,
  ValidationPipe,
} from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { IdempotencyModule, type IdempotencyModuleOptions } from '../../src/index.js';
import { createDemoApp } from '../../src/demo/create-demo-app.js';
import { DEMO_CONFIG, type DemoConfig } from '../../src/demo/demo.config.js';
import { HTTP_PLATFORMS, httpAdapterFor, type HttpPlatform } from '../../src/demo/http/http-platform.js';
import { ProblemDetailsFilter } from '../../src/demo/http/problem-details.filter.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import { PaymentsController } from '../../src/demo/payments/payments.controller.js';
import { CommitCounter } from './commit-counter.subscriber.js';

export { HTTP_PLATFORMS, type HttpPlatform };

/**
 * How the module reaches the app's transaction in a test: TypeORM through the adapter's startup
 * check (its combined messages), or TypeORM's public API only (`typeormAccess: 'public-api'`).
 */
export const HOSTS = ['typeorm', 'typeorm public API'] as const;
export type Host = (typeof HOSTS)[number];

/** Every HTTP platform with every host: the matrix the scenarios that carry the guarantees run on. */
export const PLATFORMS_AND_HOSTS: ReadonlyArray<readonly [HttpPlatform, Host]> = HTTP_PLATFORMS.flatMap((platform) =>
  HOSTS.map((host) => [platform, host] as const),
);

/**
 * The hosts the demo runs on: the TypeORM ones, `@nestjs-cls/transactional` on TypeORM
 * (`DEMO_TX=cls`: the payment written by `@Transactional()` services through `TransactionHost`),
 * and Prisma 7 on a node-postgres pool (`DEMO_TX=prisma`: the payment and its ledger entry
 * written through `IdempotentPrisma`; `DEMO_TX=cls-prisma`: by a `@Transactional()` service on it).
 * The lab apps (`startLab`) are TypeORM's.
 */
export const DEMO_HOSTS = [...HOSTS, 'cls', 'prisma', 'cls prisma'] as const;
export type DemoHost = (typeof DEMO_HOSTS)[number];

/** Every HTTP platform with every host the demo runs on. */
export const PLATFORMS_AND_DEMO_HOSTS: ReadonlyArray<readonly [HttpPlatform, DemoHost]> = HTTP_PLATFORMS.flatMap(
  (platform) => DEMO_HOSTS.map((host) => [platform, host] as const),
);

/** The module options, demo settings and demo environment that put a test on `host`. */
export function hostSettings(host: DemoHost): {
  options: IdempotencyModuleOptions;
  demo: Partial<DemoConfig>;
  env: Record<string, string>;
} {
  if (host === 'typeorm public API') {
    return {
      options: { typeormAccess: 'public-api' },
      demo: { typeormAccess: 'public-api' },
      env: { DEMO_TYPEORM_ACCESS: 'public-api' },
    };
  }
  if (host === 'cls') return { options: {}, demo: { tx: 'cls' }, env: { DEMO_TX: 'cls' } };
  if (host === 'prisma') return { options: {}, demo: { tx: 'prisma' }, env: { DEMO_TX: 'prisma' } };
  if (host === 'cls prisma') return { options: {}, demo: { tx: 'cls-prisma' }, env: { DEMO_TX: 'cls-prisma' } };
  return { options: {}, demo: {}, env: {} };
}

/** A running app and its base URL. */
export interface RunningApp {
  app: INestApplication;
  url: string;
  close(): Promise<void>;
}

export function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run the suites with `npm test`');
  return url;
}

/**
 * Where the apps under test connect: `APP_DATABASE_URL` when set (the same database through a
 * pooler: `npm run test:pooler`), else `DATABASE_URL`. What a test reads or sets up itself
 * (`sql()`, its own clients) goes to `DATABASE_URL` directly.
 */
export function appDatabaseUrl(): string {
  return process.env.APP_DATABASE_URL || databaseUrl();
}

/** How a lab app is set up besides its module options. */
export interface LabSetup {
  /** Delay inside the demo's payment handler (`POST /payments`). */
  latencyMs?: number;
  platform?: HttpPlatform;
  /**
   * The spec's own controllers, besides the demo's PaymentsController: the lab routes it calls
   * (LabController in ./common-routes.controller.ts, the rest in the fixture beside the spec).
   */
  controllers?: NonNullable<ModuleMetadata['controllers']>;
  /** Providers added to the lab's (an APP_INTERCEPTOR, a provider under test). */
  providers?: NonNullable<ModuleMetadata['providers']>;
  /** Modules added to the lab's (a transaction tool's module). */
  imports?: NonNullable<ModuleMetadata['imports']>;
  /** Install the demo's global ProblemDetailsFilter (default); `false` leaves Nest's own. */
  problemFilter?: boolean;
  /** Runs on the app before it listens (e.g. `app.enableCors()`). */
  configure?: (app: INestApplication) => void;
  /** The database the lab's TypeORM connects to. Default: `appDatabaseUrl()`. */
  databaseUrl?: string;
}

/**
 * The app starters bound to one HTTP platform, so a suite runs the same scenarios on each:
 *
 * ```ts
 * describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
 *   const { startDemo, startLab } = appsOn(platform);
 * ```
 */
export function appsOn(platform: HttpPlatform, host: DemoHost = 'typeorm') {
  const { options: hostOptions, demo } = hostSettings(host);
  return {
    startDemo: (config: Partial<DemoConfig> = {}) => startDemo({ platform, ...demo, ...config }),
    startLab: (options: IdempotencyModuleOptions = {}, setup: LabSetup = {}) =>
      startLab({ ...hostOptions, ...options }, { platform, ...setup }),
    startLabOnNamedDataSource: (name: string, setup: LabSetup = {}) =>
      startLabOnNamedDataSource(name, { platform, ...setup }),
  };
}

/** The demo payments API exactly as `npm start` builds it, on a free port (on the suites' database unless `config` names another). */
export async function startDemo(config: Partial<DemoConfig> = {}): Promise<RunningApp> {
  const app = await createDemoApp(
    {
      port: 0,
      platform: 'express',
      ttlSeconds: 86_400,
      sweepIntervalMs: 0,
      latencyMs: 0,
      providerLatencyMs: 0,
      leaseSeconds: 30,
      leaseRenewal: true,
      poolSize: 20,
      poolTimeoutMs: 5_000,
      ...config,
      databaseUrl: config.databaseUrl ?? appDatabaseUrl(),
    },
    { quiet: true },
  );
  return listen(app);
}

/**
 * An app with the demo's payments routes and the controllers a spec passes (`setup.controllers`:
 * the lab routes it calls, one behaviour each), a global ClassSerializerInterceptor,
 * ValidationPipe and problem filter, as a typical app has them.
 */
export async function startLab(options: IdempotencyModuleOptions = {}, setup: LabSetup = {}): Promise<RunningApp> {
  let dataSource: DataSource | undefined;
  try {
    return await startLabWith(
      [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            type: 'postgres',
            url: setup.databaseUrl ?? appDatabaseUrl(),
            entities: [Payment],
            subscribers: [CommitCounter],
            extra: { max: 20 },
          }),
          dataSourceFactory: async (settings) => (dataSource = await new DataSource(settings!).initialize()),
        }),
        IdempotencyModule.forRoot({ sweepInterval: 0, ...options }),
      ],
      setup,
    );
  } catch (error) {
    // A bootstrap that fails (on purpose, in some tests) must not leave its pool behind.
    if (dataSource?.isInitialized) await dataSource.destroy();
    throw error;
  }
}

/**
 * The lab app on a named TypeORM connection, configured with `forRootAsync` from an injected
 * provider, as apps with several databases do.
 */
export async function startLabOnNamedDataSource(name: string, setup: LabSetup = {}): Promise<RunningApp> {
  const SETTINGS = Symbol('settings');
  @Module({ providers: [{ provide: SETTINGS, useValue: { ttl: '1h' as const } }], exports: [SETTINGS] })
  class SettingsModule {}
  return startLabWith(
    [
      TypeOrmModule.forRoot({ name, type: 'postgres', url: appDatabaseUrl(), entities: [Payment] }),
      IdempotencyModule.forRootAsync({
        imports: [SettingsModule],
        inject: [SETTINGS],
        useFactory: (settings: { ttl: '1h' }) => ({ ...settings, dataSource: name, sweepInterval: 0 }),
      }),
    ],
    setup,
  );
}

async function startLabWith(
  imports: NonNullable<ModuleMetadata['imports']>,
  {
    latencyMs = 0,
    platform = 'express',
    controllers = [],
    providers = [],
    imports: more = [],
    problemFilter = true,
    configure,
  }: LabSetup,
): Promise<RunningApp> {
  @Module({
    imports: [...imports, ...more],
    controllers: [PaymentsController, ...controllers],
    providers: [{ provide: DEMO_CONFIG, useValue: { latencyMs } }, ...providers],
  })
  class LabModule {}

  const app = await NestFactory.create(LabModule, httpAdapterFor(platform), { logger: false });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
  app.useGlobalInterceptors(new ClassSerializerInterceptor(app.get(Reflector)));
  if (problemFilter) app.useGlobalFilters(new ProblemDetailsFilter(app.getHttpAdapter()));
  configure?.(app);
  return listen(app);
}

/** The error a bootstrap failed with, or `undefined` (the app started, and is closed again). */
export function bootstrapFailure(starting: Promise<RunningApp>): Promise<unknown> {
  return starting.then(
    (app) => app.close().then(() => undefined),
    (error: unknown) => error,
  );
}

async function listen(app: INestApplication): Promise<RunningApp> {
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}
