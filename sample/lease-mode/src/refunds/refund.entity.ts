// #region entity
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A refund, recorded once the card processor made it (db/tables.sql creates its table). */
@Entity('refunds')
export class Refund {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'payment_id' }) paymentId: string;
  @Column('integer') amount: number;
  /** The processor's id for the refund: UNIQUE, so that recording it twice keeps one row. */
  @Column('text', { name: 'provider_refund_id' }) providerRefundId: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
// #endregion entity
