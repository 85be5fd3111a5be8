import { Controller, Headers, Post, UseGuards } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { EventPattern } from '@nestjs/microservices';
import { Idempotent, IdempotentMessage } from '../../src/index.js';

/** Executions per key, across every app instance of this Jest process. */
export const executions = new Map<string, number>();

function execute(key: string): number {
  const attempt = (executions.get(key) ?? 0) + 1;
  executions.set(key, attempt);
  return attempt;
}

/** Routes whose keys expire after 1 s, so that their rows land in partitions that go past quickly. */
@Controller('partitioned')
@UseGuards(BearerAuthGuard)
export class PartitionsController {
  /** Transactional mode, ttl 1 s, 100 ms of work: counts its executions per key. */
  @Post('tx')
  @Idempotent({ ttl: '1s' })
  async tx(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = execute(key);
    await sleep(100);
    return { attempt };
  }

  /** Lease mode, ttl 1 s, 100 ms of work: counts its executions per key. */
  @Post('lease')
  @Idempotent({ mode: 'lease', ttl: '1s' })
  async lease(@Headers('idempotency-key') key: string): Promise<object> {
    const attempt = execute(key);
    await sleep(100);
    return { attempt };
  }
}

/** A route with a ttl of 3 h: the longest ttl the partitions must cover. */
@Controller('partitioned-long')
@UseGuards(BearerAuthGuard)
export class LongTtlController {
  @Post()
  @Idempotent({ ttl: '3h' })
  long(): object {
    return {};
  }
}

/** Message handlers whose ttl (3 h) is longer than any route's: the partitions must cover it too. */
@Controller()
export class LongTtlMessagesController {
  @EventPattern('partitioned.long')
  @IdempotentMessage({ ttl: '3h' })
  long(_data: unknown): void {}
}
