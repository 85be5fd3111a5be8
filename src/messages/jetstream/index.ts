export { JetStreamContext, JetStreamServer, type JetStreamServerOptions } from './jetstream-server.js';
export { type JetStreamMessage, jetStreamDelivery } from './jetstream-delivery.js';
export { type JetStreamPublishing, jetStreamPublisher } from './jetstream-publisher.js';
