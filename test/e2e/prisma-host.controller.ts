import {
  Body,
  Controller,
  Headers,
  HttpException,
  Injectable,
  InternalServerErrorException,
  Post,
  Req,
  UseGuards,
} from '@nestjs/common';
import { IsInt, IsPositive } from 'class-validator';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import type { PrismaClient } from '../../src/demo/prisma/generated/client.js';
import { IdempotentPrisma } from '../../src/tools/prisma/index.js';
import { Idempotent } from '../../src/index.js';
import { hold } from '../support/latch.js';

export const DECLINED_FROM = 1_000_000;

export class PrismaPayment {
  @IsInt()
  @IsPositive()
  amount!: number;
}

/** What code a handler left running found, by caller: its query refused, or committed on its own. */
export const leftRunning = new Map<string, Promise<string>>();

/** The payment service: two models written, the payment and its ledger entry, through `IdempotentPrisma`. */
@Injectable()
export class PrismaPayments {
  constructor(private readonly prisma: IdempotentPrisma<PrismaClient>) {}

  async pay(caller: string, amount: number) {
    const payment = await this.prisma.client.payment.create({ data: { caller, amount, currency: 'EUR' } });
    await this.prisma.client.ledgerEntry.create({ data: { paymentId: payment.id, amount } });
    return payment;
  }
}

@Controller('scenario')
@UseGuards(BearerAuthGuard)
export class PrismaScenarioController {
  constructor(
    private readonly payments: PrismaPayments,
    private readonly prisma: IdempotentPrisma<PrismaClient>,
  ) {}

  /**
   * `x-fail: after-write` fails after both writes (500); `aborted`: a statement fails and is
   * caught, the handler answers 201; `timeout`: a statement runs past its timeout (57014).
   */
  @Post('pay')
  @Idempotent()
  async pay(@Body() dto: PrismaPayment, @Req() request: AuthenticatedRequest, @Headers('x-fail') fail?: string) {
    const payment = await this.payments.pay(request.user.id, dto.amount);
    if (fail === 'after-write') throw new InternalServerErrorException('failed after its write');
    if (fail === 'aborted') await this.prisma.client.$executeRawUnsafe('SELECT 1 / 0').catch(() => undefined);
    if (fail === 'timeout') {
      await this.prisma.client.$executeRawUnsafe("SET LOCAL statement_timeout = '20ms'");
      await this.prisma.client.$queryRawUnsafe('SELECT pg_sleep(2)');
    }
    if (dto.amount >= DECLINED_FROM) throw new HttpException('declined', 402);
    return { id: payment.id, amount: payment.amount, currency: payment.currency };
  }

  /** Holds until the test releases `x-latch` (after both writes): a duplicate meets the key held. */
  @Post('held')
  @Idempotent()
  async held(@Body() dto: PrismaPayment, @Req() request: AuthenticatedRequest, @Headers('x-latch') name: string) {
    const payment = await this.payments.pay(request.user.id, dto.amount);
    await hold(name);
    return { id: payment.id };
  }

  /** An interactive $transaction() with the payment, and a nested one with its entry that fails and is caught. */
  @Post('nested')
  @Idempotent()
  nested(@Body() dto: PrismaPayment, @Req() request: AuthenticatedRequest) {
    return this.prisma.client.$transaction(async (tx) => {
      const payment = await tx.payment.create({
        data: { caller: request.user.id, amount: dto.amount, currency: 'EUR' },
      });
      const inner = await tx
        .$transaction(async (nested) => {
          await nested.ledgerEntry.create({ data: { paymentId: payment.id, amount: dto.amount } });
          throw new Error('the ledger refused the entry');
        })
        .catch((error: Error) => error.message);
      return { id: payment.id, inner };
    });
  }

  /** A batch $transaction([...]) of the payment and a second payment. */
  @Post('batch')
  @Idempotent()
  async batch(@Body() dto: PrismaPayment, @Req() request: AuthenticatedRequest) {
    const client = this.prisma.client;
    const data = { caller: request.user.id, amount: dto.amount, currency: 'EUR' };
    const [first, second] = await client.$transaction([
      client.payment.create({ data }),
      client.payment.create({ data: { ...data, amount: dto.amount + 1 } }),
    ]);
    return { ids: [first.id, second.id] };
  }

  @Post('serializable')
  @Idempotent()
  serializable(@Body() dto: PrismaPayment, @Req() request: AuthenticatedRequest) {
    return this.prisma.client
      .$transaction(
        (tx) => tx.payment.create({ data: { caller: request.user.id, amount: dto.amount, currency: 'EUR' } }),
        { isolationLevel: 'Serializable' },
      )
      .catch((error: Error) => {
        throw new InternalServerErrorException(`${error.name}: ${error.message}`);
      });
  }

  /**
   * Answers at once and leaves two writes running for after the key's transaction ended: one
   * through the client taken inside the request, one through `prisma.client` read anew.
   */
  @Post('left-running')
  @Idempotent()
  async leftRunningAfter(
    @Body() dto: PrismaPayment,
    @Req() request: AuthenticatedRequest,
    @Headers('x-latch') name: string,
  ) {
    const caller = request.user.id;
    const taken = this.prisma.client;
    const after = hold(name);
    const data = { caller, amount: dto.amount, currency: 'EUR' };
    leftRunning.set(
      caller,
      after.then(async () => {
        const kept = await taken.payment.create({ data }).then(
          () => 'committed',
          (error: Error) => `refused: ${error.message}`,
        );
        const anew = await this.prisma.client.payment.create({ data: { ...data, amount: dto.amount + 1 } }).then(
          () => 'committed',
          (error: Error) => `refused: ${error.message}`,
        );
        return `${kept} | ${anew}`;
      }),
    );
    return { answered: true };
  }
}
