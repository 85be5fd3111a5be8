// #region processor
import { Injectable } from '@nestjs/common';

/** The card processor's API: it de-duplicates the requests that carry one Idempotency-Key. */
@Injectable()
export class CardProcessor {
  /** PROCESSOR_URL, else the stand-in that `npm run processor` starts. */
  private readonly url = process.env.PROCESSOR_URL ?? 'http://127.0.0.1:4010';

  async refund(request: { idempotencyKey: string; paymentId: string; amount: number }): Promise<{ id: string }> {
    const response = await fetch(`${this.url}/refunds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': request.idempotencyKey },
      body: JSON.stringify({ payment: request.paymentId, amount: request.amount }),
      signal: AbortSignal.timeout(10_000),
    });
    // Thrown: a 500, not recorded; the key is released and a retry runs the route again.
    if (!response.ok) throw new Error(`the processor answered ${response.status}`);
    return (await response.json()) as { id: string };
  }
}
// #endregion processor
