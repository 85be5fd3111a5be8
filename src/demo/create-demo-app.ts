import { type INestApplication, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DemoConfig } from './demo.config.js';
import { DemoModule } from './demo.module.js';
import { ProblemDetailsFilter } from './http/problem-details.filter.js';

/** Builds the demo app (migrations run at init); `listen()` is left to the caller. */
export async function createDemoApp(
  config: DemoConfig & { databaseUrl: string },
  { quiet = false }: { quiet?: boolean } = {},
): Promise<INestApplication> {
  const app = await NestFactory.create(DemoModule.forRoot(config), { logger: quiet ? ['error'] : ['error', 'warn', 'log'] });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
  app.useGlobalFilters(new ProblemDetailsFilter());
  return app;
}
