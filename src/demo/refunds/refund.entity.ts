import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A refund of a demo payment, recorded once the provider confirmed it. */
@Entity('refunds')
export class Refund {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'uuid', name: 'payment_id' })
  paymentId!: string;

  @Column({ type: 'integer' })
  amount!: number;

  /** The provider's id for the refund: unique, so recording it twice keeps one row. */
  @Column({ type: 'text', name: 'provider_refund_id' })
  providerRefundId!: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
}
