// A sample app's request body: `import { CreatePaymentDto } from './create-payment.dto.js'`.
export class CreatePaymentDto {
  amount!: number;
  currency!: string;
}
