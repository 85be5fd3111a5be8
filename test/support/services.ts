/** What global setup (test/support/find-services.mjs) leaves for the suites: the services that did not answer. */
const MISSING_SERVICES = 'TEST_MISSING_SERVICES';

/** A broker some suites need (test/support/find-services.mjs finds it at global setup). */
export type Service = 'rabbitmq' | 'nats' | 'redis';

/** Whether global setup found the service. */
export function available(service: Service): boolean {
  return !(process.env[MISSING_SERVICES] ?? '').split(',').includes(service);
}

/** `describe` where the service answered, else `describe.skip` (global setup printed why). */
export function describeWith(...services: Service[]): jest.Describe {
  return services.every(available) ? describe : describe.skip;
}

/** `it` where the service answered, else `it.skip`. */
export function itWith(service: Service): jest.It {
  return available(service) ? it : it.skip;
}

/** The broker each message transport of the consumer app talks to. */
export const BROKER_OF = { rmq: 'rabbitmq', nats: 'nats' } as const satisfies Record<string, Service>;
