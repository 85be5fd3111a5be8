// #region controller
import { Body, ConflictException, Controller, Post, UseGuards } from '@nestjs/common';
import { Idempotent, IdempotencyOutbox, IdempotencyTransaction } from 'nestjs-pg-idempotency';
import { BearerAuthGuard } from '../auth/bearer-auth.guard.js';
import { PlaceOrderDto } from './place-order.dto.js';

/** The warehouse's queue: its consumer is on Nest's RMQ transport. */
const ORDERS_QUEUE = process.env.ORDERS_QUEUE ?? 'orders';
/** Billing's subject, in a JetStream stream: its consumer is a JetStreamServer handler, @EventPattern('orders.placed'). */
const ORDERS_SUBJECT = process.env.ORDERS_SUBJECT ?? 'orders.placed';

@Controller('orders')
@UseGuards(BearerAuthGuard) // sets request.user: the key's caller
export class OrdersController {
  constructor(
    private readonly tx: IdempotencyTransaction,
    private readonly outbox: IdempotencyOutbox,
  ) {}

  @Post()
  @Idempotent()
  async place(@Body() order: PlaceOrderDto) {
    const [placed] = await this.tx.manager.query<{ id: string; sku: string; quantity: number }[]>(
      'INSERT INTO orders (sku, quantity) VALUES ($1, $2) RETURNING id, sku, quantity',
      [order.sku, order.quantity],
    );
    // Written with this request's key and the order row, in one commit; published after it.
    const shipment = this.outbox.stage({
      to: 'rmq',
      destination: ORDERS_QUEUE, // the queue, through the default exchange
      payload: { pattern: 'order.placed', data: placed }, // Nest's envelope, as its RMQ transport reads it
    });
    const invoice = this.outbox.stage({
      to: 'nats',
      destination: ORDERS_SUBJECT, // the subject: JetStreamServer's pattern
      payload: placed, // the data itself (an envelope would be read as its data too)
    });
    // A throw from here on (not enough stock: 409) rolls back the order and both staged messages.
    const [stock] = await this.tx.manager.query<{ available: number }[]>(
      'SELECT available FROM stock WHERE sku = $1 FOR UPDATE',
      [order.sku],
    );
    if (!stock || stock.available < order.quantity) throw new ConflictException(`not enough ${order.sku} in stock`);
    await this.tx.manager.query('UPDATE stock SET available = available - $2 WHERE sku = $1', [
      order.sku,
      order.quantity,
    ]);
    // Each consumer reads its message's id (AMQP message-id, Nats-Msg-Id) as the key.
    return { id: placed.id, messages: { shipment, invoice } };
  }
}
// #endregion controller
