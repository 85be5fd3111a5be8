import { type INestApplication, Module, type ModuleMetadata, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { PrismaClient } from '../../src/demo/prisma/generated/client.js';
import { httpAdapterFor, type HttpPlatform } from '../../src/demo/http/http-platform.js';
import { ProblemDetailsFilter } from '../../src/demo/http/problem-details.filter.js';
import { IdempotentPrismaModule, type PrismaClientFactory } from '../../src/tools/prisma/index.js';
import { IdempotencyModule, type IdempotencyModuleOptions } from '../../src/index.js';
import { appDatabaseUrl, type RunningApp } from './apps.js';

/** The app's Prisma client, on the adapter the module gives it, as an app builds it. */
export const prismaClient: PrismaClientFactory<PrismaClient> = (adapter) => new PrismaClient({ adapter });

/** How a Prisma lab is set up besides its module options. */
export interface PrismaLabSetup {
  platform?: HttpPlatform;
  controllers?: NonNullable<ModuleMetadata['controllers']>;
  providers?: NonNullable<ModuleMetadata['providers']>;
  imports?: NonNullable<ModuleMetadata['imports']>;
  /** The app's client factory (default: `new PrismaClient({ adapter })`). */
  client?: PrismaClientFactory<unknown>;
}

/**
 * An app on Prisma over a node-postgres pool, as a Prisma team writes it: the module given the
 * pool (`IdempotencyModule.forRoot({ pool })`), `IdempotentPrismaModule.forRoot()` with the app's
 * client factory, a global ValidationPipe and problem filter.
 */
export async function startPrismaLab(
  options: IdempotencyModuleOptions = {},
  setup: PrismaLabSetup = {},
): Promise<RunningApp> {
  const pool = new pg.Pool({ connectionString: appDatabaseUrl(), max: 20 });
  const { platform = 'express', controllers = [], providers = [], imports = [], client = prismaClient } = setup;
  @Module({
    imports: [
      IdempotencyModule.forRoot({ pool, sweepInterval: 0, ...options }),
      IdempotentPrismaModule.forRoot(client as PrismaClientFactory<PrismaClient>),
      ...imports,
    ],
    controllers,
    providers,
  })
  class PrismaLabModule {}
  let app: INestApplication | undefined;
  try {
    app = await NestFactory.create(PrismaLabModule, httpAdapterFor(platform), { logger: false, abortOnError: false });
    app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
    app.useGlobalFilters(new ProblemDetailsFilter(app.getHttpAdapter()));
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app?.close().catch(() => undefined);
    await pool.end();
    throw error;
  }
  const { port } = app.getHttpServer().address() as { port: number };
  const running = app;
  return {
    app: running,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await running.close();
      await pool.end();
    },
  };
}
