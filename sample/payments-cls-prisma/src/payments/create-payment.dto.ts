import { IsInt, IsPositive, Length } from 'class-validator';

export class CreatePaymentDto {
  @IsInt() @IsPositive() amount: number;
  @Length(3, 3) currency: string;
}
