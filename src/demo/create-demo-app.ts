import { type INestApplication, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, type OpenAPIObject } from '@nestjs/swagger';
import { createIdempotentDocument } from '../http/openapi/idempotent-document.js';
import type { DemoConfig } from './demo.config.js';
import { DemoModule } from './demo.module.js';
import { httpAdapterFor } from './http/http-platform.js';
import { ProblemDetailsFilter } from './http/problem-details.filter.js';

/** Builds the demo app on `config.platform` (migrations run at init); `listen()` is left to the caller. */
export async function createDemoApp(
  config: DemoConfig & { databaseUrl: string },
  { quiet = false }: { quiet?: boolean } = {},
): Promise<INestApplication> {
  const app = await NestFactory.create(DemoModule.forRoot(config), httpAdapterFor(config.platform), {
    logger: quiet ? ['error'] : ['error', 'warn', 'log'],
  });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
  app.useGlobalFilters(new ProblemDetailsFilter(app.getHttpAdapter()));
  serveOpenApi(app);
  return app;
}

/** `GET /openapi.json`: the demo's OpenAPI document, every `@Idempotent()` route documented by `createIdempotentDocument()`. */
function serveOpenApi(app: INestApplication): void {
  let document: OpenAPIObject | undefined;
  const adapter = app.getHttpAdapter();
  adapter.get('/openapi.json', (_request: unknown, response: unknown) => {
    document ??= createIdempotentDocument(
      app,
      new DocumentBuilder().setTitle('nestjs-pg-idempotency demo').setVersion('1').addBearerAuth().build(),
    );
    adapter.reply(response, document, 200);
  });
}
