/** Every suite runs against a real PostgreSQL: see test/support/global-setup.mjs. */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // test/pooler/ needs PgBouncer: npm run test:pooler (jest.pooler.config.mjs); test/partitioned/
  // the key table partitioned by expiry: npm run test:partitioned (jest.partitioned.config.mjs).
  testPathIgnorePatterns: ['/node_modules/', '/test/pooler/', '/test/partitioned/'],
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/)'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // What test/unit/loaded-versions.spec.ts expects to load (jest.nest11.config.mjs: 11 and 0.3).
  globals: { EXPECTED_STACK: { '@nestjs/core': '12.', typeorm: '1.', 'nestjs-cls': '6.' } },
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  setupFilesAfterEnv: ['<rootDir>/test/support/after-each-file.ts'],
  testEnvironmentOptions: { globalsCleanup: 'off' },
  maxWorkers: 1,
  testTimeout: 60_000,
};
