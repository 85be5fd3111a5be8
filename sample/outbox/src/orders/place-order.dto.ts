import { IsInt, IsPositive, Length } from 'class-validator';

export class PlaceOrderDto {
  @Length(1, 64) sku: string;
  @IsInt() @IsPositive() quantity: number;
}
