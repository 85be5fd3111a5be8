import { Body, Controller, HttpCode, Post, UnprocessableEntityException } from '@nestjs/common';
import { Idempotent } from '../../src/index.js';

/** A provider's webhook route (a named caller) keeping tombstones: 1 s of answers, 1 h of tombstones. */
@Controller('provider')
export class ProviderEventsController {
  /** Deliveries the handler ran. */
  handled = 0;

  @Post('events')
  @HttpCode(200)
  @Idempotent({
    keyFrom: { body: 'id' },
    caller: 'provider',
    keyFormat: 'printable-ascii',
    ttl: '1s',
    tombstone: '1h',
    expiryHeader: true,
  })
  receive(@Body() body: { id: string; refuse?: boolean }): { received: string } {
    this.handled++;
    // A deterministic 4xx: recorded (the default policy), so its retries get it back.
    if (body.refuse) throw new UnprocessableEntityException('this event is refused');
    return { received: body.id };
  }
}
