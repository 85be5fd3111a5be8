import { Field, ID, Int, ObjectType } from '@nestjs/graphql';

@ObjectType('Payment')
export class PaymentModel {
  @Field(() => ID) id: string;
  @Field(() => Int) amount: number;
  @Field() currency: string;
  @Field() createdAt: Date; // the DateTime scalar: a replay's Date is a Date again
}

@ObjectType('Refund')
export class RefundModel {
  @Field(() => ID) id: string;
  @Field(() => ID) paymentId: string;
  @Field(() => Int) amount: number;
}
