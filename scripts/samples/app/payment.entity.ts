// A sample app's payment, as the samples import it: `import { Payment } from './payment.entity.js'`.
import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('payments')
export class Payment {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column('text', { nullable: true }) caller!: string | null;
  @Column('integer') amount!: number;
  @Column('text') currency!: string;
}
