import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';

/** What each route is sent: the payer (the payments row's caller) and the amount. */
interface Delivery {
  payer: string;
  amount: number;
}

/**
 * Receivers of a provider's deliveries, each reading its key from another source than
 * `Idempotency-Key`, with no bearer token: the provider is the caller. Duplicates in flight wait
 * for the first (`wait`), so that every delivery is answered 200, as providers expect.
 */
@Controller('sources')
export class KeySourceController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('header')
  @HttpCode(200)
  @Idempotent({ keyFrom: { header: 'X-Delivery-Id' }, caller: 'provider', keyFormat: 'printable-ascii', wait: '10s' })
  header(@Body() delivery: Delivery): Promise<object> {
    return this.pay(delivery);
  }

  @Post('body')
  @HttpCode(200)
  @Idempotent({
    keyFrom: { body: 'event.id' },
    caller: 'provider',
    keyFormat: /evt_[A-Za-z0-9]+/,
    fingerprint: ['event.id'],
    wait: '10s',
  })
  body(@Body() delivery: { event: Delivery }): Promise<object> {
    return this.pay(delivery.event);
  }

  /** An Adyen-like notification: the key is two fields together; the caller, the merchant's header. */
  @Post('function')
  @HttpCode(200)
  @Idempotent({
    keyFrom: (request) => (request.body?.psp === undefined ? undefined : `${request.body.psp}:${request.body.code}`),
    caller: (request) => request.headers['x-merchant'],
    keyFormat: 'printable-ascii',
  })
  composite(@Body() delivery: Delivery): Promise<object> {
    return this.pay(delivery);
  }

  private async pay({ payer, amount }: Delivery): Promise<object> {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const payments = this.tx.getRepository(Payment);
    const { id } = await payments.save(payments.create({ caller: payer, amount, currency: 'EUR' }));
    return { received: true, payment: id };
  }
}
