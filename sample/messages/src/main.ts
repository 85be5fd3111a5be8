import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { jetStream } from './transports/jetstream.js';
import { declareDeadLetterQueue, rabbitMq } from './transports/rabbitmq.js';

async function bootstrap() {
  // A hybrid app: HTTP for your routes and health checks, and a microservice feeding PaymentEvents.
  const app = await NestFactory.create(AppModule);
  if (process.env.TRANSPORT === 'jetstream') {
    app.connectMicroservice(jetStream());
  } else {
    await declareDeadLetterQueue();
    app.connectMicroservice(rabbitMq());
  }
  // On SIGTERM, keys in flight finish before the app stops; a message not begun is delivered again.
  app.enableShutdownHooks();
  await app.startAllMicroservices();
  await app.listen(process.env.PORT ?? 3000);
}
void bootstrap();
