import { Controller, Get, type MessageEvent, Next, Post, Res, Sse } from '@nestjs/common';
import { interval, map, type Observable } from 'rxjs';
import { Idempotent } from '../../src/index.js';

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
