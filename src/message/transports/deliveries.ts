import type { ExecutionContext } from '@nestjs/common';

type RpcArgumentsHost = ReturnType<ExecutionContext['switchToRpc']>;
import { type AmqpChannel, type AmqpMessage, rmqDelivery } from './rmq-delivery.js';
import type { MessageDelivery } from './message-delivery.js';

/** The context of a transport of the module's own (`JetStreamServer`): it hands the delivery over as it is. */
export interface DeliveringContext {
  delivery(): MessageDelivery;
}

/** What the entry reads of Nest's `RmqContext`. */
interface RmqContextLike {
  getMessage(): AmqpMessage;
  getChannelRef(): AmqpChannel;
  getPattern(): string;
}

/**
 * The delivery an RPC handler was called for: from Nest's RMQ transport (`RmqContext`) or from a
 * transport of the module's own; `undefined` for one whose messages cannot be settled here.
 */
export function deliveryOf(rpc: RpcArgumentsHost): MessageDelivery | undefined {
  const context = rpc.getContext() as Partial<RmqContextLike & DeliveringContext> | undefined;
  if (typeof context?.delivery === 'function') return context.delivery();
  if (typeof context?.getChannelRef === 'function' && typeof context.getMessage === 'function' && typeof context.getPattern === 'function') {
    return rmqDelivery(context.getChannelRef(), context.getMessage(), String(context.getPattern()), { value: rpc.getData() });
  }
  return undefined;
}
