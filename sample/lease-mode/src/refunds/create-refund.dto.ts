import { IsInt, IsPositive } from 'class-validator';

export class CreateRefundDto {
  @IsInt() @IsPositive() amount: number;
}
