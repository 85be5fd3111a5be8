import { type JetStreamClient, headers as natsHeaders } from 'nats';
import { type OutboxMessage, type OutboxPublisher } from '../../options/outbox-options.js';
import { OutboxPublishError } from '../../outbox/outbox-publish.error.js';

/** What the publisher uses of a `nats` JetStream client (`connection.jetstream()`). */
export type JetStreamPublishing = Pick<JetStreamClient, 'publish'>;

/**
 * Publishes the outbox's messages to NATS JetStream: the message's id as `Nats-Msg-Id` (the
 * stream's duplicate window drops a re-publish within it, and an `@IdempotentMessage()` consumer
 * reads it as the key by default), its headers as NATS headers. A message is delivered once the
 * stream acks it, a duplicate ack included.
 *
 * ```ts
 * outbox: { publishers: { nats: jetStreamPublisher(connection.jetstream()) } }
 * ```
 */
export function jetStreamPublisher(js: JetStreamPublishing): OutboxPublisher {
  return {
    async publish(message: OutboxMessage): Promise<void> {
      const names = Object.keys(message.headers);
      let headers: ReturnType<typeof natsHeaders> | undefined;
      if (names.length > 0) {
        headers = natsHeaders();
        for (const name of names) headers.set(name, message.headers[name]);
      }
      try {
        await js.publish(message.destination, message.payload, { msgID: message.id, ...(headers ? { headers } : {}) });
      } catch (error) {
        // NATS answers "503" (no responders) when no stream takes the subject.
        if ((error as { code?: unknown }).code === '503')
          throw new OutboxPublishError(`no JetStream stream takes the subject "${message.destination}"`, {
            cause: error,
          });
        throw error;
      }
    },
  };
}
