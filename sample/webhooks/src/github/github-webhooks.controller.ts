import { Body, Controller, Headers, HttpCode, Post, UseGuards } from '@nestjs/common';
import { Idempotent, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { GitHubSignatureGuard } from './github-signature.guard.js';

@Controller('webhooks')
export class GitHubWebhooksController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('github')
  @HttpCode(200)
  @UseGuards(GitHubSignatureGuard)
  @Idempotent({
    keyFrom: { header: 'X-GitHub-Delivery' }, // a UUID, the default keyFormat
    caller: 'github',
    fingerprint: ({ headers }) => headers['x-github-delivery'], // the delivery's id alone, as for Stripe
    ttl: '4d', // GitHub redelivers deliveries of the past 3 days
    wait: '30s',
  })
  async receive(
    @Headers('x-github-delivery') delivery: string,
    @Headers('x-github-event') name: string,
    @Body() payload: { action?: string },
  ): Promise<{ received: string }> {
    // The key's transaction, for SQL of your own: the row and the key commit together.
    await this.tx.manager.query('INSERT INTO github_events (delivery, name, action) VALUES ($1, $2, $3)', [
      delivery,
      name,
      payload.action ?? null,
    ]);
    return { received: delivery };
  }
}
