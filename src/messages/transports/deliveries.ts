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
 * The delivery an RPC handler was called for, and whether its transport publishes how the
 * handler's Observable ends: Nest's RMQ server publishes each value, an error, and the end itself
 * (`{ isDisposed: true }`) to the request's `replyTo`; a transport of the module's own
 * (`JetStreamServer`) publishes nothing and waits for the end.
 */
export interface RpcDelivery {
  delivery: MessageDelivery;
  publishesEnd: boolean;
}

/** The delivery of an RPC handler's call: from Nest's RMQ transport (`RmqContext`) or from a transport of the module's own; `undefined` for one whose messages cannot be settled here. */
export function deliveryOf(rpc: RpcArgumentsHost): RpcDelivery | undefined {
  const context = rpc.getContext() as Partial<RmqContextLike & DeliveringContext> | undefined;
  if (typeof context?.delivery === 'function') return { delivery: context.delivery(), publishesEnd: false };
  if (
    typeof context?.getChannelRef === 'function' &&
    typeof context.getMessage === 'function' &&
    typeof context.getPattern === 'function'
  ) {
    return {
      delivery: rmqDelivery(context.getChannelRef(), context.getMessage(), String(context.getPattern()), {
        value: rpc.getData(),
      }),
      publishesEnd: true,
    };
  }
  return undefined;
}
