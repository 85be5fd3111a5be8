import {
  BadRequestException,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  type RawBodyRequest,
} from '@nestjs/common';
import type { Request } from 'express';
import Stripe from 'stripe';

/** A request whose Stripe signature was checked, with the event Stripe's SDK read from it. */
export type StripeRequest = RawBodyRequest<Request> & { stripeEvent: Stripe.Event };

/**
 * Checks the Stripe-Signature header on the raw body with Stripe's SDK. Guards run before
 * interceptors: a forged delivery is refused (400) before its key is reserved, so nothing is kept.
 */
@Injectable()
export class StripeSignatureGuard implements CanActivate {
  private readonly secret = process.env.STRIPE_WEBHOOK_SECRET;

  constructor() {
    if (!this.secret) throw new Error('set STRIPE_WEBHOOK_SECRET (the endpoint signing secret, whsec_…)');
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<StripeRequest>();
    try {
      request.stripeEvent = Stripe.webhooks.constructEvent(
        request.rawBody ?? '',
        request.headers['stripe-signature'] ?? '',
        this.secret!,
      );
    } catch {
      throw new BadRequestException('invalid Stripe signature');
    }
    return true;
  }
}
