// The brokers the message suites use, found the way PostgreSQL is: its URL when set (RABBITMQ_URL,
// NATS_URL), else the machine's default port. Where neither answers, the suites that need it are
// skipped, and the run says so in one line naming the service and how to start it; under CI=true
// a missing service fails the run instead.
import { Socket } from 'node:net';

export const SERVICES = {
  rabbitmq: {
    name: 'RabbitMQ',
    variable: 'RABBITMQ_URL',
    url: 'amqp://guest:guest@127.0.0.1:5672',
    start: 'rabbitmq-server -detached, or set RABBITMQ_URL',
  },
  nats: {
    name: 'NATS with JetStream',
    variable: 'NATS_URL',
    url: 'nats://127.0.0.1:4222',
    start: 'nats-server -js, or set NATS_URL',
  },
};

/** The variable global setup leaves for the suites: the services that did not answer, comma-separated. */
export const MISSING_SERVICES = 'TEST_MISSING_SERVICES';

/** Whether a TCP connection to the URL's host and port opens within two seconds. */
function answers(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(Number(port), hostname.replace(/^\[|\]$/g, ''), () => done(true));
  });
}

/** Finds every service; sets each one's URL variable and MISSING_SERVICES; returns the lines to print. */
export async function findServices() {
  const missing = [];
  const lines = [];
  for (const [id, service] of Object.entries(SERVICES)) {
    const url = process.env[service.variable] || service.url;
    process.env[service.variable] = url;
    if (await answers(url)) continue;
    missing.push(id);
    const where = new URL(url).host;
    lines.push(`${service.name} does not answer on ${where}: its suites are skipped (start it: ${service.start})`);
  }
  process.env[MISSING_SERVICES] = missing.join(',');
  if (missing.length > 0 && process.env.CI === 'true') {
    throw new Error(`CI=true and a service the suites need is missing:\n${lines.join('\n')}`);
  }
  return lines;
}
