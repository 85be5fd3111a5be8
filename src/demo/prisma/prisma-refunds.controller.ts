import {
  Body,
  Controller,
  Get,
  Inject,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
  Req,
  UnprocessableEntityException,
  UseGuards,
} from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotentPrisma } from '../../tools/prisma/index.js';
import { Idempotent } from '../../bootstrap/idempotent.decorator.js';
import { IdempotencyTransaction } from '../../tools/typeorm/idempotency-transaction.js';
import { DEMO_CONFIG, type DemoConfig } from '../demo.config.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../http/bearer-auth.guard.js';
import { CreateRefundDto } from '../refunds/create-refund.dto.js';
import type { PrismaClient } from './generated/client.js';

const REFUND_FIELDS = { id: true, paymentId: true, amount: true, providerRefundId: true, createdAt: true } as const;

/** The demo's refunds on Prisma (`DEMO_TX=prisma`): lease mode, as `RefundsController`, through the app's Prisma client. */
@Controller('payments/:paymentId/refunds')
@UseGuards(BearerAuthGuard)
export class PrismaRefundsController {
  constructor(
    private readonly prisma: IdempotentPrisma<PrismaClient>,
    private readonly tx: IdempotencyTransaction,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  @Post()
  @Idempotent({ mode: 'lease' })
  async create(
    @Param('paymentId', ParseUUIDPipe) paymentId: string,
    @Body() dto: CreateRefundDto,
    @Req() request: AuthenticatedRequest,
  ) {
    const payment = await this.findPayment(paymentId, request);
    if (dto.amount > payment.amount) {
      throw new UnprocessableEntityException(`a refund cannot exceed the payment's amount (${payment.amount})`);
    }
    const effect = await this.refundAtProvider(this.tx.downstreamKey('refund'), paymentId, dto.amount);
    const client = this.prisma.client;
    await client.refund.createMany({
      data: [{ paymentId, amount: dto.amount, providerRefundId: effect.id }],
      skipDuplicates: true,
    });
    return client.refund.findUniqueOrThrow({ where: { providerRefundId: effect.id }, select: REFUND_FIELDS });
  }

  @Get()
  async list(@Param('paymentId', ParseUUIDPipe) paymentId: string, @Req() request: AuthenticatedRequest) {
    await this.findPayment(paymentId, request);
    return this.prisma.client.refund.findMany({
      where: { paymentId },
      orderBy: { createdAt: 'asc' },
      select: REFUND_FIELDS,
    });
  }

  /** The simulated provider (`SimulatedPaymentProvider`'s ledger): at most one refund per key, every call counted. */
  private async refundAtProvider(idempotencyKey: string, paymentId: string, amount: number): Promise<{ id: string }> {
    const [effect] = await this.prisma.client.$queryRawUnsafe<Array<{ id: string }>>(
      `INSERT INTO demo_provider_refunds (idempotency_key, payment_id, amount) VALUES ($1, $2::uuid, $3)
       ON CONFLICT (idempotency_key) DO UPDATE SET calls = demo_provider_refunds.calls + 1
       RETURNING id::text`,
      idempotencyKey,
      paymentId,
      amount,
    );
    if (this.config.providerLatencyMs > 0) await sleep(this.config.providerLatencyMs);
    return effect;
  }

  private async findPayment(id: string, request: AuthenticatedRequest) {
    const payment = await this.prisma.client.payment.findFirst({ where: { id, caller: request.user.id } });
    if (!payment) throw new NotFoundException(`no payment ${id} for this caller`);
    return payment;
  }
}
