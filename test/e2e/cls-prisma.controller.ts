import { HttpException, Injectable } from '@nestjs/common';
import { Propagation, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import type { PrismaClient } from '../../src/demo/prisma/generated/client.js';
import type { IdempotentTransactionalAdapterPrisma } from '../../src/tools/cls/index.js';
import { clsScenarioController } from './hosts.controller.js';

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
export const ClsPrismaScenarioController = clsScenarioController(PrismaScenarioPayments, PrismaScenarioLedger);
