// Proves which NestJS and TypeORM the suites, and the src/ code under test, load: the Jest config
// names the expected version prefixes (jest.config.mjs: NestJS 12, TypeORM 1;
// jest.nest11.config.mjs: NestJS 11, TypeORM 0.3), and nestjs-cls (6; 7 under the nest11 config). Versions are read where the imports resolve.
import { loadedVersion } from '../support/loaded-versions.js';

declare const EXPECTED_STACK: Record<string, string>;

const NEST_PACKAGES = [
  '@nestjs/common',
  '@nestjs/platform-express',
  '@nestjs/platform-fastify',
  '@nestjs/typeorm',
  '@nestjs/swagger',
];
const majorOf = (name: string): string => loadedVersion(name).split('.')[0];

describe('loaded NestJS and TypeORM', () => {
  it.each(Object.entries(EXPECTED_STACK))('%s is %s*', (name, prefix) => {
    expect(loadedVersion(name)).toMatch(new RegExp(`^${prefix.replaceAll('.', '\\.')}`));
  });

  it.each(NEST_PACKAGES)('%s has the major of @nestjs/core', (name) => {
    expect(majorOf(name)).toBe(majorOf('@nestjs/core'));
  });
});
