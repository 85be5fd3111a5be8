import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Runs a snippet in a separate Node.js process from the package root (`npm test` built dist/). */
function node(args: string[]): string {
  return execFileSync(process.execPath, args, { encoding: 'utf8' }).trim();
}

describe('the package exports (built by npm test before Jest runs)', () => {
  it.each([
    ['require', 'nestjs-pg-idempotency', 'IdempotencyModule'],
    ['require', 'nestjs-pg-idempotency/client', 'IdempotentClient'],
    ['import', 'nestjs-pg-idempotency', 'IdempotencyModule'],
    ['import', 'nestjs-pg-idempotency/client', 'IdempotentClient'],
    ['require', 'nestjs-pg-idempotency/swagger', 'ApiIdempotent'],
    ['import', 'nestjs-pg-idempotency/swagger', 'ApiIdempotent'],
    ['require', 'nestjs-pg-idempotency/swagger', 'createIdempotentDocument'],
    ['import', 'nestjs-pg-idempotency/swagger', 'createIdempotentDocument'],
    ['require', 'nestjs-pg-idempotency/terminus', 'IdempotencyHealthIndicator'],
    ['import', 'nestjs-pg-idempotency/terminus', 'IdempotencyHealthIndicator'],
    ['require', 'nestjs-pg-idempotency', 'IdempotencyKeyConsole'],
    ['import', 'nestjs-pg-idempotency', 'IdempotencyResealer'],
    ['require', 'nestjs-pg-idempotency/cls', 'IdempotentTransactionalAdapterTypeOrm'],
    ['import', 'nestjs-pg-idempotency/cls', 'IdempotentTransactionalAdapterTypeOrm'],
    ['require', 'nestjs-pg-idempotency/drizzle', 'IdempotentDrizzle'],
    ['import', 'nestjs-pg-idempotency/drizzle', 'IdempotentDrizzle'],
    ['require', 'nestjs-pg-idempotency/prisma', 'IdempotentPrisma'],
    ['import', 'nestjs-pg-idempotency/prisma', 'IdempotentPrisma'],
    ['require', 'nestjs-pg-idempotency/jetstream', 'JetStreamServer'],
    ['import', 'nestjs-pg-idempotency/jetstream', 'JetStreamServer'],
    ['import', 'nestjs-pg-idempotency', 'IdempotentMessages'],
  ])('%s("%s") provides %s', (how, specifier, name) => {
    const script =
      how === 'require'
        ? ['-e', `process.stdout.write(typeof require(${JSON.stringify(specifier)}).${name})`]
        : [
            '--input-type=module',
            '-e',
            `const m = await import(${JSON.stringify(specifier)}); process.stdout.write(typeof m.${name})`,
          ];
    expect(node(script)).toBe('function');
  });

  it.each(['esm', 'cjs'])(
    'in the %s build only the swagger entry (and the demo, which is not shipped) imports @nestjs/swagger (an optional peer)',
    (build) => {
      const importers = (readdirSync(join('dist', build), { recursive: true }) as string[])
        .filter(
          (file) => file.endsWith('.js') && readFileSync(join('dist', build, file), 'utf8').includes('@nestjs/swagger'),
        )
        .map((file) => file.split(/[\\/]/).slice(0, 2).join('/'));
      expect(new Set(importers.filter((folder) => !folder.startsWith('demo/')))).toEqual(new Set(['http/openapi']));
    },
  );

  it.each(['esm', 'cjs'])(
    'in the %s build only the terminus entry imports @nestjs/terminus, and only telemetry names @opentelemetry/api (loaded at bootstrap, when installed)',
    (build) => {
      const files = (readdirSync(join('dist', build), { recursive: true }) as string[]).filter((file) =>
        file.endsWith('.js'),
      );
      const naming = (name: string) =>
        new Set(
          files
            .filter((file) => readFileSync(join('dist', build, file), 'utf8').includes(name))
            .map((file) => file.split(/[\\/]/).slice(0, 2).join('/')),
        );
      expect(naming('@nestjs/terminus')).toEqual(new Set(['operations/terminus']));
      expect(naming('@opentelemetry/api')).toEqual(new Set(['observe/telemetry']));
    },
  );

  it.each(['esm', 'cjs'])(
    'in the %s build only the cls entry (and the demo) import nestjs-cls and @nestjs-cls/* (optional peers)',
    (build) => {
      const importers = (readdirSync(join('dist', build), { recursive: true }) as string[])
        .filter(
          (file) =>
            file.endsWith('.js') &&
            /["'](?:nestjs-cls|@nestjs-cls\/[\w-]+)["']/.test(readFileSync(join('dist', build, file), 'utf8')),
        )
        .map((file) => file.split(/[\\/]/).slice(0, 2).join('/'));
      expect([...new Set(importers)].filter((folder) => !folder.startsWith('demo/'))).toEqual(['tools/cls']);
    },
  );

  it.each(['esm', 'cjs'])(
    'in the %s build only the drizzle entry imports drizzle-orm, only the jetstream entry nats (optional peers), and nothing imports typeorm but for types',
    (build) => {
      const files = (readdirSync(join('dist', build), { recursive: true }) as string[]).filter((file) =>
        file.endsWith('.js'),
      );
      const importing = (pattern: RegExp, depth = 2) =>
        [
          ...new Set(
            files
              .filter((file) => pattern.test(readFileSync(join('dist', build, file), 'utf8')))
              .map((file) => file.split(/[\\/]/).slice(0, depth).join('/')),
          ),
        ].filter((folder) => !folder.startsWith('demo/'));
      expect(importing(/(?:from\s+|require\()\s*["']drizzle-orm/)).toEqual(['tools/drizzle']);
      expect(importing(/(?:from\s+|require\()\s*["']@prisma\//)).toEqual(['tools/prisma']);
      expect(importing(/(?:from\s+|require\()\s*["'](?:nats|@nestjs\/microservices)["']/, 3).sort()).toEqual([
        'messages/jetstream/jetstream-publisher.js',
        'messages/jetstream/jetstream-server.js',
      ]);
      expect(importing(/(?:from\s+|require\()\s*["']typeorm["']/)).toEqual([]);
    },
  );

  it.each(['esm', 'cjs'])(
    'the %s client imports nothing but its own files (no NestJS, no Node.js modules)',
    (build) => {
      const folder = join('dist', build, 'client');
      for (const file of readdirSync(folder).filter((name) => name.endsWith('.js'))) {
        const source = readFileSync(join(folder, file), 'utf8');
        const specifiers = [...source.matchAll(/(?:from\s+|require\()\s*["']([^"']+)["']/g)].map((match) => match[1]);
        expect(specifiers.filter((specifier) => !specifier.startsWith('./'))).toEqual([]);
      }
    },
  );
});
