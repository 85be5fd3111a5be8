// #region controller
import { Body, Controller, Param, Post } from '@nestjs/common';
import { Payouts } from './payouts.service.js';

@Controller('payouts')
export class PayoutsController {
  constructor(private readonly payouts: Payouts) {}

  /** Answers what `run()` came to: `{ kind, value }`, or `{ kind, error }` with the error as text. */
  @Post(':id')
  async pay(@Param('id') id: string, @Body() body: { account: string; amount: number }) {
    const result = await this.payouts.pay(id, body.account, body.amount);
    return 'error' in result ? { kind: result.kind, error: String(result.error) } : result;
  }
}
// #endregion controller
