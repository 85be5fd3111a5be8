import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { PAYMENTS_QUEUE } from './payments/payments.queue.js';

/** A worker: an application context (no HTTP server) whose processor takes jobs until SIGTERM. */
async function bootstrap() {
  const app = await NestFactory.createApplicationContext(AppModule);
  // On SIGTERM, the jobs in flight finish (and their keys with them) before the worker stops.
  app.enableShutdownHooks();
  console.log(`worker started on queue ${PAYMENTS_QUEUE}`);
}
void bootstrap();
