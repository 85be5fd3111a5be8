// The brokers the message suites use (and Redis, the BullMQ suite's), found the way PostgreSQL
// is: its URL when set (RABBITMQ_URL, NATS_URL, REDIS_URL); else a Testcontainers container when
// a Docker engine answers (RabbitMQ's module; NATS with JetStream and Redis as generic containers:
// the NATS module sets a user and password); else the machine's default port. Where none answers,
// the suites that need it are skipped, and the run says so in one line naming the service and how
// to start it; under CI=true a missing service fails the run instead. Global teardown stops the
// containers started here.
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { Socket } from 'node:net';

export const SERVICES = {
  rabbitmq: {
    name: 'RabbitMQ',
    variable: 'RABBITMQ_URL',
    url: 'amqp://guest:guest@127.0.0.1:5672',
    start: 'rabbitmq-server -detached, or set RABBITMQ_URL',
    async container() {
      const { RabbitMQContainer } = await import('@testcontainers/rabbitmq');
      const started = await new RabbitMQContainer('rabbitmq:3.13-alpine').start();
      return { url: started.getAmqpUrl(), stop: () => started.stop() };
    },
  },
  nats: {
    name: 'NATS with JetStream',
    variable: 'NATS_URL',
    url: 'nats://127.0.0.1:4222',
    start: 'nats-server -js, or set NATS_URL',
    async container() {
      const { GenericContainer, Wait } = await import('testcontainers');
      const started = await new GenericContainer('nats:2.10-alpine')
        .withCommand(['-js'])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start();
      return { url: `nats://${started.getHost()}:${started.getMappedPort(4222)}`, stop: () => started.stop() };
    },
  },
  redis: {
    name: 'Redis',
    variable: 'REDIS_URL',
    url: 'redis://127.0.0.1:6379',
    start: 'redis-server --daemonize yes, or set REDIS_URL',
    async container() {
      const { GenericContainer, Wait } = await import('testcontainers');
      const started = await new GenericContainer('redis:7-alpine')
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
        .start();
      return { url: `redis://${started.getHost()}:${started.getMappedPort(6379)}`, stop: () => started.stop() };
    },
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

/** Whether a Docker engine answers on DOCKER_HOST's socket, else /var/run/docker.sock. */
export function dockerAnswers() {
  const socketPath = process.env.DOCKER_HOST?.startsWith('unix://')
    ? process.env.DOCKER_HOST.slice('unix://'.length)
    : '/var/run/docker.sock';
  if (!existsSync(socketPath)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * Finds every service; sets each one's URL variable and MISSING_SERVICES; returns the lines to
 * print and the containers started, to stop after the run.
 */
export async function findServices() {
  const missing = [];
  const lines = [];
  const containers = [];
  const docker = await dockerAnswers();
  for (const [id, service] of Object.entries(SERVICES)) {
    if (!process.env[service.variable] && docker) {
      const container = await service.container();
      containers.push(container);
      process.env[service.variable] = container.url;
      lines.push(`${service.name}: Testcontainers, ${new URL(container.url).host}`);
      continue;
    }
    const url = process.env[service.variable] || service.url;
    process.env[service.variable] = url;
    if (await answers(url)) continue;
    missing.push(id);
    const where = new URL(url).host;
    lines.push(`${service.name} does not answer on ${where}: its suites are skipped (start it: ${service.start})`);
  }
  process.env[MISSING_SERVICES] = missing.join(',');
  if (missing.length > 0 && process.env.CI === 'true') {
    await Promise.all(containers.map((container) => container.stop()));
    throw new Error(`CI=true and a service the suites need is missing:\n${lines.join('\n')}`);
  }
  return { lines, containers };
}
