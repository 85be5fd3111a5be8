import { Body, Controller, Module, Post } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Idempotent, IdempotencyModule, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('payments')
export class Payment {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('integer') amount: number;
  @Column('text') currency: string;
}

@Controller('payments')
export class PaymentsController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  @Post()
  @Idempotent()
  create(@Body() dto: { amount: number; currency: string }) {
    return this.tx.getRepository(Payment).save(dto); // commits with the key, or not at all
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [Payment],
      synchronize: true, // creates the payments table: for this quick start only, use migrations in production
    }),
    // No authentication yet: every client shares one scope of keys. Once a guard sets
    // request.user, remove anonymousCallers: each caller then has keys of its own.
    IdempotencyModule.forRoot({ anonymousCallers: 'shared' }),
  ],
  controllers: [PaymentsController],
})
export class PaymentsModule {}
