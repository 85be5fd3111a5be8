// #region script
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { Payouts } from './payouts/payouts.service.js';

/** `npm run payout -- <payout id> <account> <amount>`: the route's payout, from a shell. */
async function main() {
  const [id, account, amount] = process.argv.slice(2);
  // The app's providers in an application context: no HTTP server.
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
  try {
    const result = await app.get(Payouts).pay(id, account, Number(amount));
    console.log(JSON.stringify('error' in result ? { kind: result.kind, error: String(result.error) } : result));
    if (result.kind !== 'executed' && result.kind !== 'replayed') process.exitCode = 1;
  } finally {
    await app.close();
  }
}
void main();
// #endregion script
