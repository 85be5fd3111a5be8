import { IsInt, IsPositive, Matches, Max } from 'class-validator';

export class CreatePaymentDto {
  @IsInt()
  @IsPositive()
  @Max(2_147_483_647)
  amount!: number;

  @Matches(/^[A-Z]{3}$/, { message: 'currency must be three upper-case letters (ISO 4217)' })
  currency!: string;
}
