// #region channel
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib';

/**
 * A confirm channel to RabbitMQ that outlives a dropped connection: `channel()` gives the open
 * channel, or opens a new connection once the last one closed. The outbox's publisher calls it
 * for each message, so a publish after a drop goes out on the new channel.
 */
@Injectable()
export class RabbitMqChannel implements OnApplicationShutdown {
  private readonly logger = new Logger(RabbitMqChannel.name);
  private opened?: Promise<ConfirmChannel>;
  private connection?: ChannelModel;
  private closing = false;

  channel(): Promise<ConfirmChannel> {
    if (this.closing) return Promise.reject(new Error('the app is shutting down'));
    if (this.opened === undefined) {
      const opened = (this.opened = this.open());
      // Forgotten when it fails or closes: the next call opens a new one.
      const forget = () => void (this.opened === opened && (this.opened = undefined));
      opened.then((channel) => channel.once('close', forget), forget);
    }
    return this.opened;
  }

  private async open(): Promise<ConfirmChannel> {
    const connection = (this.connection = await connect(
      process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    ));
    // With no 'error' listener, a dropped connection ends the process (Error: Unexpected close).
    connection.on('error', (error: Error) => this.logger.warn(`RabbitMQ connection lost: ${error.message}`));
    try {
      const channel = await connection.createConfirmChannel();
      channel.on('error', (error: Error) => this.logger.warn(`RabbitMQ channel closed: ${error.message}`));
      channel.on('close', () => void connection.close().catch(() => undefined));
      return channel;
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.connection?.close().catch(() => undefined);
  }
}
// #endregion channel
