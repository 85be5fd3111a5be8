import { Body, Controller, Headers, HttpException, Injectable, InternalServerErrorException, Post, Req, UseGuards } from '@nestjs/common';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import type { PrismaClient } from '../../src/demo/prisma/generated/client.js';
import type { IdempotentTransactionalAdapterPrisma } from '../../src/hosts/cls/index.js';
import { Idempotent } from '../../src/index.js';
import { ScenarioPayment } from './hosts.controller.js';

const DECLINED_FROM = 1_000_000;


/** The innermost service on Prisma: writes the payment and its ledger entry through `TransactionHost`, in a `@Transactional()` method. */
@Injectable()
export class PrismaScenarioLedger {
  constructor(private readonly txHost: TransactionHost<IdempotentTransactionalAdapterPrisma<PrismaClient>>) {}

  @Transactional()
  async record(caller: string, amount: number): Promise<string> {
    return this.recordWithoutDecorator(caller, amount);
  }

  async recordWithoutDecorator(caller: string, amount: number): Promise<string> {
    const payment = await this.txHost.tx.payment.create({ data: { caller, amount, currency: 'EUR' } });
    await this.txHost.tx.ledgerEntry.create({ data: { paymentId: payment.id, amount } });
    return payment.id;
  }

  @Transactional(Propagation.RequiresNew)
  async recordOnItsOwn(caller: string, amount: number): Promise<string> {
    return this.record(caller, amount);
  }

  @Transactional<IdempotentTransactionalAdapterPrisma<PrismaClient>>({ isolationLevel: 'Serializable' })
  async recordSerializable(caller: string, amount: number): Promise<string> {
    return this.record(caller, amount);
  }

  @Transactional(Propagation.NotSupported)
  async recordWithoutTransaction(caller: string, amount: number): Promise<string> {
    return this.recordWithoutDecorator(caller, amount);
  }
}

/** The outer service: a `@Transactional()` method calling the ledger's, the write two services deep. */
@Injectable()
export class PrismaScenarioPayments {
  constructor(
    private readonly txHost: TransactionHost<IdempotentTransactionalAdapterPrisma<PrismaClient>>,
    private readonly ledger: PrismaScenarioLedger,
  ) {}

  @Transactional()
  async pay(caller: string, amount: number) {
    const id = await this.ledger.record(caller, amount);
    if (amount >= DECLINED_FROM) throw new HttpException('declined', 402);
    const { currency } = await this.txHost.tx.payment.findUniqueOrThrow({ where: { id } });
    return { id, amount, currency };
  }

  @Transactional()
  async payThenFailInside(caller: string, amount: number, propagation: Propagation): Promise<{ kept: string }> {
    const kept = await this.ledger.record(caller, amount);
    await this.txHost
      .withTransaction(propagation, async () => {
        await this.ledger.record(caller, amount + 1);
        throw new Error('inner failure');
      })
      .catch(() => undefined);
    return { kept };
  }
}

/** The routes of `ClsScenarioController`, on Prisma through `IdempotentTransactionalAdapterPrisma`. */
@Controller('scenario')
@UseGuards(BearerAuthGuard)
export class ClsPrismaScenarioController {
  constructor(
    private readonly payments: PrismaScenarioPayments,
    private readonly ledger: PrismaScenarioLedger,
  ) {}

  @Post('pay')
  @Idempotent()
  async pay(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest, @Headers('x-fail') fail?: string) {
    const payment = await this.payments.pay(request.user.id, dto.amount);
    if (fail === 'after-write') throw new InternalServerErrorException('failed after its write');
    return payment;
  }

  @Post('caught')
  @Idempotent()
  async caught(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest): Promise<{ caught: string }> {
    try {
      await this.payments.pay(request.user.id, DECLINED_FROM + dto.amount);
    } catch (error) {
      return { caught: (error as Error).message };
    }
    return { caught: 'nothing' };
  }

  @Post('caught-after-write')
  @Idempotent()
  async caughtAfterWrite(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest): Promise<{ caught: string }> {
    await this.ledger.recordWithoutDecorator(request.user.id, dto.amount);
    return this.caught(dto, request);
  }

  @Post('inner-failure/nested')
  @Idempotent()
  innerNestedFailure(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest) {
    return this.payments.payThenFailInside(request.user.id, dto.amount, Propagation.Nested);
  }

  @Post('inner-failure/required')
  @Idempotent()
  innerRequiredFailure(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest) {
    return this.payments.payThenFailInside(request.user.id, dto.amount, Propagation.Required);
  }

  @Post('requires-new')
  @Idempotent()
  requiresNew(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest) {
    return named(this.ledger.recordOnItsOwn(request.user.id, dto.amount));
  }

  @Post('serializable')
  @Idempotent()
  serializable(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest) {
    return named(this.ledger.recordSerializable(request.user.id, dto.amount));
  }

  @Post('not-supported')
  @Idempotent()
  notSupported(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest) {
    return named(this.ledger.recordWithoutTransaction(request.user.id, dto.amount));
  }

  @Post('plain')
  plain(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest) {
    return this.payments.pay(request.user.id, dto.amount);
  }
}

function named<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: Error) => {
    throw new InternalServerErrorException(`${error.name}: ${error.message}`);
  });
}
