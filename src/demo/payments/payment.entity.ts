import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A payment of the demo API; `caller` is the bearer token that created it. */
@Entity('payments')
export class Payment {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'text', select: false })
  caller!: string;

  @Column({ type: 'integer' })
  amount!: number;

  @Column({ type: 'char', length: 3 })
  currency!: string;

  @CreateDateColumn({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
}
