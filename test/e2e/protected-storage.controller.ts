import { Controller, Header, Post, Req, UseGuards } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { writePayment } from '../support/common-routes.controller.js';

/** The card details the redacting route answers with; a replay answers without the redacted ones. */
export const CARD_TOKEN = 'tok_4f9c2e7a1b';
export const CARD_NUMBER = '4242424242424242';

@Controller('protected')
@UseGuards(BearerAuthGuard)
export class ProtectedStorageController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** Names a header and body fields (one inside an array) that are never stored. */
  @Post('card')
  @Idempotent({ redact: { headers: ['X-Card-Token'], body: ['card.number', 'items.secret'] } })
  @Header('X-Card-Token', CARD_TOKEN)
  @Header('X-Card-Brand', 'visa')
  async card(@Req() request: AuthenticatedRequest): Promise<object> {
    const payment = await writePayment(this.tx, request);
    return { id: payment.id, card: { number: CARD_NUMBER, last4: '4242' }, items: [{ secret: 's1', n: 1 }, { n: 2 }] };
  }
}
