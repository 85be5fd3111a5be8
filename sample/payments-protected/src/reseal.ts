// Seals every completed row with the first encryption key (after a rotation): `npm run reseal`,
// after `npm run build`, with the app's environment. Prints the report as JSON.
import { NestFactory } from '@nestjs/core';
import { IdempotencyResealer } from 'nestjs-pg-idempotency';
import { AppModule } from './app.module.js';

async function reseal(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
  // #region reseal
  const report = await app.get(IdempotencyResealer).reseal({ batchSize: 500 });
  // { resealed: 18234, unreadable: 0, skipped: 3 }
  // #endregion reseal
  console.log(JSON.stringify(report));
  await app.close();
}

void reseal();
