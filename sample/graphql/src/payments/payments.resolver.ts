import { UseGuards } from '@nestjs/common';
import { Args, Context, ID, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { Idempotent, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { GqlBearerAuthGuard } from '../auth/gql-bearer-auth.guard.js';
import { Payment } from './payment.entity.js';
import { PaymentModel, RefundModel } from './payment.models.js';
import { Refund } from './refund.entity.js';

/** The HTTP request in the GraphQL context, with the caller the guard set. */
type AuthenticatedRequest = { user: { id: string } };

@Resolver(() => PaymentModel)
@UseGuards(GqlBearerAuthGuard) // sets req.user: the key's caller
export class PaymentsResolver {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Query(() => Int)
  paymentCount(): Promise<number> {
    return this.tx.getRepository(Payment).count();
  }

  /** Once per Idempotency-Key header: a retry gets the recorded payment. */
  @Mutation(() => PaymentModel)
  @Idempotent()
  createPayment(
    @Args('amount', { type: () => Int }) amount: number,
    @Args('currency') currency: string,
    @Context('req') request: AuthenticatedRequest,
  ): Promise<PaymentModel> {
    // This repository works in the transaction that reserved the key: the row and the key commit together.
    return this.tx.getRepository(Payment).save({ caller: request.user.id, amount, currency });
  }

  /** Once per key in the mutation's own argument, as Shopify's `@idempotent(key:)` takes it. */
  @Mutation(() => RefundModel)
  @Idempotent({ keyFrom: { argument: 'idempotencyKey' }, keyFormat: 'printable-ascii' })
  refundPayment(
    @Args('idempotencyKey') _key: string,
    @Args('paymentId', { type: () => ID }) paymentId: string,
    @Args('amount', { type: () => Int }) amount: number,
    @Context('req') request: AuthenticatedRequest,
  ): Promise<RefundModel> {
    return this.tx.getRepository(Refund).save({ caller: request.user.id, paymentId, amount });
  }
}
