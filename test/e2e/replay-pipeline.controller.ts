import {
  type ArgumentsHost,
  Body,
  type CallHandler,
  Catch,
  Controller,
  type ExceptionFilter,
  type ExecutionContext,
  Header,
  HttpCode,
  type HttpServer,
  Injectable,
  type NestInterceptor,
  Post,
  Req,
  Res,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { IsInt, IsPositive, IsString, Length } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { map, type Observable } from 'rxjs';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';
import type { HeaderSetter } from '../support/platform-response.js';

export class TransferDto {
  @IsInt()
  @IsPositive()
  amount!: number;

  @IsString()
  @Length(2, 40)
  reference!: string;
}

/** A business failure the handler throws after writing; not an HttpException. */
export class CardDeclined extends Error {}

/** Turns `CardDeclined` into a 402 of the app's own shape, with a fresh id each time. */
@Catch(CardDeclined)
export class CardDeclinedFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(_error: CardDeclined, host: ArgumentsHost): void {
    const http: HttpServer = this.adapterHost.httpAdapter;
    http.reply(host.switchToHttp().getResponse(), { code: 'card_declined', declineId: randomUUID() }, 402);
  }
}

/** A global interceptor that wraps every answer in an envelope with a fresh nonce. */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((data) => ({ data, meta: { nonce: randomUUID() } })));
  }
}

/** Routes whose answers are shaped by the pipeline around the handler. */
@Controller('fidelity')
@UseGuards(BearerAuthGuard)
export class FidelityController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** 202 (@HttpCode), a static header, a Location only the first run knows, a run id. */
  @Post('accepted')
  @Idempotent()
  @HttpCode(202)
  @Header('X-Static', 'set-by-the-route')
  async accepted(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: HeaderSetter,
  ): Promise<Payment> {
    const payment = await this.write(request, 100);
    response.header('Location', `/fidelity/payments/${payment.id}`);
    response.header('X-Run-Id', randomUUID());
    return payment;
  }

  /** Validated by the app's global ValidationPipe (whitelist, forbidNonWhitelisted). */
  @Post('transfer')
  @Idempotent()
  async transfer(@Req() request: AuthenticatedRequest, @Body() dto: TransferDto): Promise<object> {
    const payment = await this.write(request, dto.amount);
    return { id: payment.id, amount: dto.amount, reference: dto.reference };
  }

  @Post('declined')
  @Idempotent()
  @UseFilters(CardDeclinedFilter)
  async declined(@Req() request: AuthenticatedRequest): Promise<never> {
    await this.write(request, 100);
    throw new CardDeclined('insufficient funds');
  }

  private write(request: AuthenticatedRequest, amount: number): Promise<Payment> {
    const payments = this.tx.getRepository(Payment);
    return payments.save(payments.create({ caller: request.user.id, amount, currency: 'EUR' }));
  }
}
