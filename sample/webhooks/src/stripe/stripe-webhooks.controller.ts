import { Controller, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { Idempotent, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { Payment } from './payment.entity.js';
import { type StripeRequest, StripeSignatureGuard } from './stripe-signature.guard.js';

@Controller('webhooks')
export class StripeWebhooksController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('stripe')
  @HttpCode(200) // the replay's status is the first delivery's
  @UseGuards(StripeSignatureGuard)
  @Idempotent({
    keyFrom: { body: 'id' }, // the event's id, evt_…
    caller: 'stripe', // a provider sends no token: every delivery is in Stripe's scope
    keyFormat: /evt_[A-Za-z0-9]+/, // matched against the whole key
    fingerprint: ['id'], // the event's id alone: Stripe changes pending_webhooks between deliveries
    ttl: '4d', // longer than Stripe redelivers (3 days)
    tombstone: '31d', // a person may resend an event for 30 days: it is answered 200 and runs nothing
    wait: '30s', // a delivery that arrives while the first runs waits for it, then gets its replay
  })
  async receive(@Req() request: StripeRequest): Promise<{ received: string }> {
    const event = request.stripeEvent;
    if (event.type === 'payment_intent.succeeded') {
      const intent = event.data.object;
      // This repository works in the transaction that reserved the key: the row and the key commit together.
      await this.tx.getRepository(Payment).save({
        stripeEvent: event.id,
        customer: typeof intent.customer === 'string' ? intent.customer : null, // an id; none for a guest
        amount: intent.amount,
        currency: intent.currency,
      });
    }
    return { received: event.id };
  }
}
