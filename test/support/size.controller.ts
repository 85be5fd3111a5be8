import { Controller, Headers, Post, UseGuards } from '@nestjs/common';
import { Idempotent } from '../../src/index.js';
import { BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';

/** A lease-mode route whose answer is over its 64-byte limit; counts its runs per key. */
@Controller('size')
@UseGuards(BearerAuthGuard)
export class SizeController {
  private readonly runs = new Map<string, number>();

  @Post('lease')
  @Idempotent({ mode: 'lease', maxResponseBytes: 64 })
  lease(@Headers('idempotency-key') key: string): object {
    const run = (this.runs.get(key) ?? 0) + 1;
    this.runs.set(key, run);
    return { run, data: 'x'.repeat(100) };
  }
}
