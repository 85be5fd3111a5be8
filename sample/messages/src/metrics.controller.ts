import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';

/** Prometheus's scrape: with prom-client installed, the module counts each message's outcome (idempotency_messages_total). */
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('content-type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}
