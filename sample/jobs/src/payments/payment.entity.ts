// #region entity
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A payment: one row per order charged (db/tables.sql creates its table). */
@Entity('payments')
export class Payment {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') caller: string;
  @Column('integer') amount: number;
  @Column('char', { length: 3 }) currency: string;
  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
// #endregion entity
