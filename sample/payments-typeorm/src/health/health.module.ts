// #region health
import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { IdempotencyHealthIndicator } from 'nestjs-pg-idempotency/terminus';

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly idempotency: IdempotencyHealthIndicator,
  ) {}

  @Get('health')
  @HealthCheck()
  check() {
    return this.health.check([() => this.idempotency.isHealthy('idempotency')]);
  }
}

@Module({ imports: [TerminusModule], controllers: [HealthController], providers: [IdempotencyHealthIndicator] })
export class HealthModule {}
// #endregion health
