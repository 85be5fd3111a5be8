// The global setup of jest.nest11.config.mjs: says which NestJS and TypeORM the suites load
// (compat/nest11), then gives them a PostgreSQL like the main setup does.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import globalSetup from './global-setup.mjs';

const modules = resolve(import.meta.dirname, '../../compat/nest11/node_modules');
const PACKAGES = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/platform-fastify',
  '@nestjs/typeorm',
  '@nestjs/swagger',
  'typeorm',
];

export default async function globalSetupNest11() {
  if (!existsSync(join(modules, '@nestjs/core/package.json'))) {
    throw new Error(
      'compat/nest11 is not installed: run `npm run test:nest11` (it runs `npm ci --prefix compat/nest11` first)',
    );
  }
  const versions = PACKAGES.map(
    (name) => `${name}@${JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')).version}`,
  );
  process.stdout.write(`\nSuites load compat/nest11: ${versions.join(', ')}\n`);
  // The demo processes the suites spawn (test/support/demo-process.cjs) load it too.
  process.env.DEMO_STACK = 'nest11';
  await globalSetup();
}
