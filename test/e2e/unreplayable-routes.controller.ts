import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { from, interval, map, type Observable, of, switchMap } from 'rxjs';
import { Idempotent, IdempotencyTransaction } from '../../src/index.js';
import { BearerAuthGuard, type AuthenticatedRequest } from '../../src/demo/http/bearer-auth.guard.js';
import { writePayment } from '../support/common-routes.controller.js';

/** A handler that returns an Observable: replayable when it emits one value, not otherwise. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class ObservableController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** Writes, then emits one value per `count` (1 by default; `0` means endlessly, every 10 ms). */
  @Post('observable')
  @Idempotent()
  observable(@Req() request: AuthenticatedRequest, @Body() body: { count?: number }): Observable<object> {
    const count = body.count ?? 1;
    return from(writePayment(this.tx, request)).pipe(
      switchMap((payment) =>
        count === 0
          ? interval(10).pipe(map((n) => ({ n, paymentId: payment.id })))
          : of(...Array.from({ length: count }, (_, n) => ({ n, paymentId: payment.id }))),
      ),
    );
  }
}
