import { Body, Controller, Get, type MessageEvent, Next, Post, Req, Res, Sse, UseGuards } from '@nestjs/common';
import { from, interval, map, type Observable, of, switchMap } from 'rxjs';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
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

/** Platform-neutral: Express's `Response` and Fastify's `FastifyReply` both have `status().send()`. */
interface Reply {
  status(code: number): { send(body: string): unknown };
}

/** Answers by itself through @Res(): a replay would never be sent. */
@Controller('unreplayable/raw')
export class RawResponseController {
  @Post()
  @Idempotent()
  pay(@Res() response: Reply): void {
    response.status(201).send('{"paid":true}');
  }
}

/** Hands the request on with @Next(). */
@Controller('unreplayable/next')
export class NextController {
  @Post()
  @Idempotent()
  pay(@Next() next: () => void): void {
    next();
  }
}

/** An event stream marked @Idempotent() on the method. */
@Controller('unreplayable/events')
export class SseController {
  @Sse()
  @Idempotent()
  events(): Observable<MessageEvent> {
    return interval(10).pipe(map((n) => ({ data: { n } })));
  }
}

/** @Idempotent() on the class covers its @Sse() route too. */
@Controller('unreplayable/class')
@Idempotent()
export class IdempotentClassWithSseController {
  @Post()
  pay(): object {
    return { paid: true };
  }

  @Sse('events')
  events(): Observable<MessageEvent> {
    return interval(10).pipe(map((n) => ({ data: { n } })));
  }
}

/** @Res() and @Sse() on routes that are not @Idempotent(): nothing to refuse. */
@Controller('replayable-neighbours')
export class NonIdempotentController {
  @Get('raw')
  raw(@Res() response: Reply): void {
    response.status(200).send('raw');
  }

  @Sse('events')
  events(): Observable<MessageEvent> {
    return interval(10).pipe(map((n) => ({ data: { n } })));
  }
}
