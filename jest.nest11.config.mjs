/**
 * The same suites as jest.config.mjs, on NestJS 11 and TypeORM 0.3 from the second install in
 * compat/nest11 (`npm run test:nest11` installs it with `npm ci` and runs this config).
 *
 * Every `@nestjs/*` and `typeorm` import, from src/, test/ and inside those packages, is mapped
 * to compat/nest11/node_modules; everything else (rxjs, pg, class-validator, class-transformer)
 * resolves from the root install, one copy each, as in an app (reflect-metadata too, plus TypeORM
 * 0.3's copy in compat/nest11: the same 0.2 version, which shares one metadata registry).
 * test/unit/loaded-versions.spec.ts checks what was loaded. The suites that spawn the built demo
 * (crash, processes) run it on the same stack: the global setup sets DEMO_STACK=nest11
 * (test/support/demo-process.cjs).
 */
import base from './jest.config.mjs';

const compat = '<rootDir>/compat/nest11/node_modules';

export default {
  ...base,
  moduleNameMapper: {
    ...base.moduleNameMapper,
    '^@nestjs/(.*)$': `${compat}/@nestjs/$1`,
    // @nestjs-cls/transactional on nestjs-cls 7 (the root install has 6): both majors are tested.
    '^@nestjs-cls/(.*)$': `${compat}/@nestjs-cls/$1`,
    '^nestjs-cls$': `${compat}/nestjs-cls`,
    '^typeorm$': `${compat}/typeorm`,
    '^typeorm/(.*)$': `${compat}/typeorm/$1`,
  },
  // The message, outbox, webhook, GraphQL, scheduled-job, BullMQ and tombstone suites run their apps as processes of the
  // root install (NestJS 12) whatever the config: on this one they would prove nothing more, twice as long.
  // The demo's processes on this stack (DEMO_STACK=nest11) are proven by `npm run test:faults` on it,
  // which .ci/run runs: processes.spec.ts would run them again.
  testPathIgnorePatterns: [
    ...base.testPathIgnorePatterns,
    '/test/e2e/processes.spec',
    '/test/e2e/outbox',
    '/test/e2e/messages-',
    '/test/e2e/webhooks.spec',
    '/test/e2e/graphql.spec',
    '/test/e2e/scheduled-job.spec',
    '/test/e2e/bullmq-jobs.spec',
    '/test/e2e/tombstones.spec',
  ],
  // NestJS 11 is CommonJS: nothing under node_modules needs compiling (NestJS 12's ESM did).
  transformIgnorePatterns: ['/node_modules/'],
  globals: { ...base.globals, EXPECTED_STACK: { '@nestjs/core': '11.', typeorm: '0.3.', 'nestjs-cls': '7.' } },
  globalSetup: '<rootDir>/test/support/global-setup.nest11.mjs',
};
