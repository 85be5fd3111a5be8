import { IsInt, IsPositive, Max } from 'class-validator';

export class CreateRefundDto {
  @IsInt()
  @IsPositive()
  @Max(2_147_483_647)
  amount!: number;
}
