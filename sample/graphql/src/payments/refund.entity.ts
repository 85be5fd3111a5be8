import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('refunds')
export class Refund {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'payment_id' }) paymentId: string;
  @Column('text') caller: string;
  @Column('integer') amount: number;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
