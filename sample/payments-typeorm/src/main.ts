import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { withIdempotencyCors } from 'nestjs-pg-idempotency';
import { createIdempotentDocument } from 'nestjs-pg-idempotency/swagger';
import { AppModule } from './app.module.js';

async function bootstrap() {
  const app = await NestFactory.create(AppModule);
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
  // #region cors
  app.enableCors(
    withIdempotencyCors({
      origin: 'https://shop.example',
      allowedHeaders: ['Authorization', 'Content-Type'], // + Idempotency-Key
      exposedHeaders: ['Location'], // + Idempotent-Replayed, Retry-After, Idempotency-Key-Expires
    }),
  );
  // #endregion cors
  // #region openapi
  const document = createIdempotentDocument(app, new DocumentBuilder().setTitle('Payments').build());
  SwaggerModule.setup('docs', app, document); // the JSON at /docs-json
  // #endregion openapi
  // On SIGTERM, keys in flight finish before the app stops (docs/operations.md).
  app.enableShutdownHooks();
  await app.listen(process.env.PORT ?? 3000);
}
void bootstrap();
