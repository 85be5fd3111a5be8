import {
  Body,
  Controller,
  Headers,
  HttpException,
  Inject,
  Injectable,
  InternalServerErrorException,
  Post,
  Req,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { IsInt, IsPositive } from 'class-validator';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import type { IdempotentTransactionalAdapterTypeOrm } from '../../src/tools/cls/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { Payment } from '../../src/demo/payments/payment.entity.js';

export class ScenarioPayment {
  @IsInt()
  @IsPositive()
  amount!: number;
}

/** Amounts from this one up are declined (402) once written: a thrown deterministic 4xx. */
const DECLINED_FROM = 1_000_000;

/**
 * The scenarios every transaction host carries, the same routes on each: `POST /scenario/pay`
 * writes a payment and answers it; a 402 once written from 1,000,000 up; a 500 once written with
 * `x-fail: after-write`.
 */
@Controller('scenario')
@UseGuards(BearerAuthGuard)
export class TypeOrmScenarioController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post('pay')
  @Idempotent()
  async pay(
    @Body() dto: ScenarioPayment,
    @Req() request: AuthenticatedRequest,
    @Headers('x-fail') fail?: string,
  ): Promise<Payment> {
    const payments = this.tx.getRepository(Payment);
    const { id } = await payments.save(
      payments.create({ caller: request.user.id, amount: dto.amount, currency: 'EUR' }),
    );
    if (fail === 'after-write') throw new InternalServerErrorException('failed after its write');
    if (dto.amount >= DECLINED_FROM) throw new HttpException('declined', 402);
    return payments.findOneByOrFail({ id });
  }
}

/** The innermost service: writes through `TransactionHost`, in a `@Transactional()` method. */
@Injectable()
export class ScenarioLedger {
  constructor(private readonly txHost: TransactionHost<IdempotentTransactionalAdapterTypeOrm>) {}

  @Transactional()
  async record(caller: string, amount: number): Promise<string> {
    const payments = this.txHost.tx.getRepository(Payment);
    return (await payments.save(payments.create({ caller, amount, currency: 'EUR' }))).id;
  }

  /** The same write with no `@Transactional()`: through `txHost.tx` as it is. */
  async recordWithoutDecorator(caller: string, amount: number): Promise<string> {
    const payments = this.txHost.tx.getRepository(Payment);
    return (await payments.save(payments.create({ caller, amount, currency: 'EUR' }))).id;
  }

  /** A transaction of its own, committed independently: refused inside an @Idempotent() request. */
  @Transactional(Propagation.RequiresNew)
  async recordOnItsOwn(caller: string, amount: number): Promise<string> {
    return this.record(caller, amount);
  }

  @Transactional<IdempotentTransactionalAdapterTypeOrm>({ isolationLevel: 'SERIALIZABLE' })
  async recordSerializable(caller: string, amount: number): Promise<string> {
    return this.record(caller, amount);
  }

  @Transactional(Propagation.NotSupported)
  async recordWithoutTransaction(caller: string, amount: number): Promise<string> {
    const payments = this.txHost.tx.getRepository(Payment);
    return (await payments.save(payments.create({ caller, amount, currency: 'EUR' }))).id;
  }
}

/** The outer service: a `@Transactional()` method calling the ledger's, so the write is two services deep. */
@Injectable()
export class ScenarioPayments {
  constructor(
    private readonly txHost: TransactionHost<IdempotentTransactionalAdapterTypeOrm>,
    private readonly ledger: ScenarioLedger,
  ) {}

  @Transactional()
  async pay(caller: string, amount: number): Promise<Payment> {
    const id = await this.ledger.record(caller, amount);
    if (amount >= DECLINED_FROM) throw new HttpException('declined', 402);
    return this.txHost.tx.getRepository(Payment).findOneByOrFail({ id });
  }

  /** A first write, then a second one in a transaction inside (with `propagation`) that fails and is caught. */
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

/** What the cls scenario routes call, on any tool: the outer service of a payment. */
export interface ClsScenarioPayments {
  pay(caller: string, amount: number): Promise<unknown>;
  payThenFailInside(caller: string, amount: number, propagation: Propagation): Promise<{ kept: string }>;
}

/** What the cls scenario routes call, on any tool: the innermost service, writing through `TransactionHost`. */
export interface ClsScenarioLedger {
  recordWithoutDecorator(caller: string, amount: number): Promise<string>;
  recordOnItsOwn(caller: string, amount: number): Promise<string>;
  recordSerializable(caller: string, amount: number): Promise<string>;
  recordWithoutTransaction(caller: string, amount: number): Promise<string>;
}

/** The cls scenario routes over the services of one tool (TypeORM, Prisma): the same routes on each. */
export function clsScenarioController(
  Payments: Type<ClsScenarioPayments>,
  Ledger: Type<ClsScenarioLedger>,
): Type<unknown> {
  @Controller('scenario')
  @UseGuards(BearerAuthGuard)
  class ClsScenarioRoutes {
    constructor(
      @Inject(Payments) private readonly payments: ClsScenarioPayments,
      @Inject(Ledger) private readonly ledger: ClsScenarioLedger,
    ) {}

    @Post('pay')
    @Idempotent()
    async pay(
      @Body() dto: ScenarioPayment,
      @Req() request: AuthenticatedRequest,
      @Headers('x-fail') fail?: string,
    ): Promise<unknown> {
      const payment = await this.payments.pay(request.user.id, dto.amount);
      if (fail === 'after-write') throw new InternalServerErrorException('failed after its write');
      return payment;
    }

    /** The outermost @Transactional() call fails after its write; the handler catches it and answers. */
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

    /** A write through `TransactionHost` first, then the outermost @Transactional() call, which fails after its write; caught. */
    @Post('caught-after-write')
    @Idempotent()
    async caughtAfterWrite(
      @Body() dto: ScenarioPayment,
      @Req() request: AuthenticatedRequest,
    ): Promise<{ caught: string }> {
      await this.ledger.recordWithoutDecorator(request.user.id, dto.amount);
      return this.caught(dto, request);
    }

    @Post('inner-failure/nested')
    @Idempotent()
    innerNestedFailure(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest): Promise<{ kept: string }> {
      return this.payments.payThenFailInside(request.user.id, dto.amount, Propagation.Nested);
    }

    @Post('inner-failure/required')
    @Idempotent()
    innerRequiredFailure(
      @Body() dto: ScenarioPayment,
      @Req() request: AuthenticatedRequest,
    ): Promise<{ kept: string }> {
      return this.payments.payThenFailInside(request.user.id, dto.amount, Propagation.Required);
    }

    @Post('requires-new')
    @Idempotent()
    requiresNew(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest): Promise<string> {
      return named(this.ledger.recordOnItsOwn(request.user.id, dto.amount));
    }

    @Post('serializable')
    @Idempotent()
    serializable(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest): Promise<string> {
      return named(this.ledger.recordSerializable(request.user.id, dto.amount));
    }

    @Post('not-supported')
    @Idempotent()
    notSupported(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest): Promise<string> {
      return named(this.ledger.recordWithoutTransaction(request.user.id, dto.amount));
    }

    /** Outside any @Idempotent() request, @Transactional() is upstream's: a transaction of its own. */
    @Post('plain')
    plain(@Body() dto: ScenarioPayment, @Req() request: AuthenticatedRequest): Promise<unknown> {
      return this.payments.pay(request.user.id, dto.amount);
    }
  }
  return ClsScenarioRoutes;
}

/** The cls scenario routes on TypeORM, through `IdempotentTransactionalAdapterTypeOrm`. */
export const ClsScenarioController = clsScenarioController(ScenarioPayments, ScenarioLedger);

/** The error a call failed with, as a 500 whose detail is its name and message. */
function named<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: Error) => {
    throw new InternalServerErrorException(`${error.name}: ${error.message}`);
  });
}
