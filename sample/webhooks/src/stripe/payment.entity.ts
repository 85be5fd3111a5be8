import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('payments')
export class Payment {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text', { name: 'stripe_event' }) stripeEvent: string;
  @Column('text', { nullable: true }) customer: string | null;
  @Column('integer') amount: number;
  @Column('char', { length: 3 }) currency: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
