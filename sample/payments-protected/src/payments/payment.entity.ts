import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('payments')
export class Payment {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') caller: string;
  @Column('integer') amount: number;
  @Column('char', { length: 3 }) currency: string;
  @Column('char', { length: 4, name: 'card_last4' }) cardLast4: string;
}
