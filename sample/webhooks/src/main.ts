import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

async function bootstrap() {
  // rawBody: the providers sign the bytes they sent, so their signature checks need them as sent.
  const app = await NestFactory.create(AppModule, { rawBody: true });
  // On SIGTERM, deliveries in flight finish before the app stops (docs/operations.md).
  app.enableShutdownHooks();
  await app.listen(process.env.PORT ?? 3000);
}
void bootstrap();
