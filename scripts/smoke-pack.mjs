// Packs the package (npm pack) and installs the tarball into two fresh apps, then builds and
// runs each one's app from scripts/smoke-pack/ against PostgreSQL (DATABASE_URL, else embedded):
// - a CommonJS NestJS 11 app with TypeORM 0.3, compiled by its own TypeScript 5.9 with
//   moduleResolution node10, as such apps are still set up (types via typesVersions): app.ts;
// - an ESM NestJS 12 app with TypeORM 1, compiled by the project's TypeScript (nodenext): app.ts.
// The subpaths' hosts (./cls, ./drizzle, ./prisma, with no TypeORM installed for the last two)
// run in the sample apps (`npm run samples`), each installed alone from the tarball.
// Before that, publint and @arethetypeswrong/cli lint the tarball: any message fails the smoke.
// After, every relative link of the installed package's Markdown must resolve (smoke-pack/links.mjs).
// The NestJS 11 app pins the lowest versions the peer ranges allow; the NestJS 12 app takes the
// newest. Proves those two ends of the peer ranges, the dual build and the ./client entry.
// Needs the npm registry (it installs the apps' dependencies). Run after `npm run build`.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ESM, NEST12, run, startPostgres, writeTsconfig } from './packed-app.mjs';
import { brokenLinks } from './smoke-pack/links.mjs';

const root = resolve(import.meta.dirname, '..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const work = mkdtempSync(join(tmpdir(), 'nestjs-pg-idempotency-pack-'));

const apps = [
  {
    name: 'nest11-cjs',
    type: 'commonjs',
    compilerOptions: {
      module: 'commonjs',
      moduleResolution: 'node10',
      ignoreDeprecations: '5.0',
      esModuleInterop: true,
    },
    // The lowest versions the peer ranges allow.
    dependencies: {
      '@nestjs/common': '11.0.0',
      '@nestjs/core': '11.0.0',
      '@nestjs/platform-express': '11.0.0',
      '@nestjs/typeorm': '11.0.0',
      typeorm: '0.3.20',
      pg: '8.11.0',
      'reflect-metadata': '0.1.13',
      rxjs: '7.8.0',
      typescript: '5.9.3',
    },
  },
  // The newest versions the peer ranges allow.
  { name: 'nest12-esm', ...ESM, dependencies: { ...NEST12, '@nestjs/typeorm': '^12.0.0', typeorm: '^1.0.0' } },
];

let database;
try {
  run('npm', ['pack', '--silent', '--pack-destination', work], root);
  const tarball = join(
    work,
    readdirSync(work).find((name) => name.endsWith('.tgz')),
  );
  console.log('== publint, attw: the tarball');
  const lint = (tool, args, clean) => {
    let output;
    try {
      output = run(process.execPath, [join(root, 'node_modules', tool), ...args], root);
    } catch (error) {
      output = `${error.stdout ?? ''}${error.message}`;
    }
    if (!clean(output)) {
      console.error(output);
      throw new Error(`${tool.split('/')[0]} reported problems in the tarball (above)`);
    }
  };
  lint('publint/src/cli.js', ['run', tarball], (output) => output.includes('All good!'));
  lint('@arethetypeswrong/cli/dist/index.js', [tarball, '--no-color', '--no-emoji'], (output) =>
    output.includes('No problems found'),
  );
  console.log('   publint: all good; attw: no problems (root, ./client, ./swagger, ./cls, ./drizzle, ./prisma)');
  database = await startPostgres(root);
  for (const app of apps) {
    const dir = join(work, app.name);
    cpSync(join(root, 'scripts/smoke-pack/app.ts'), join(dir, 'src/app.ts'));
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: `smoke-${app.name}`,
        private: true,
        type: app.type,
        dependencies: {
          ...app.dependencies,
          'nestjs-pg-idempotency': `file:${tarball}`,
          '@types/node': '^20.0.0',
          '@types/pg': '^8.11.0',
        },
      }),
    );
    writeTsconfig(dir, app.compilerOptions);
    console.log(`== ${app.name}: npm install`);
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], dir);
    const versions = ['@nestjs/core', '@nestjs/typeorm', 'typeorm', 'nestjs-cls', 'drizzle-orm', '@prisma/client', 'pg']
      .filter((name) => name in app.dependencies)
      .map(
        (name) =>
          `${name}@${JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version}`,
      );
    console.log(`== ${app.name}: tsc, run (${versions.join(', ')})`);
    const ownTsc = join(dir, 'node_modules/typescript/bin/tsc');
    run(process.execPath, [app.dependencies.typescript ? ownTsc : tsc, '-p', 'tsconfig.json'], dir);
    const output = run(process.execPath, ['dist/app.js'], dir, { ...process.env, DATABASE_URL: database.url });
    console.log(`   ${output.trim()}`);
    // The plain SQL migration resolves through the package's exports, and is the only one shipped.
    const sql = run(
      process.execPath,
      [
        '-p',
        `require('node:fs').readFileSync(require.resolve('nestjs-pg-idempotency/migrations/1795996800000-create-idempotency-keys.sql'), 'utf8').includes('CREATE TABLE IF NOT EXISTS idempotency_keys')`,
      ],
      dir,
    );
    if (sql.trim() !== 'true') throw new Error('the shipped SQL migration did not resolve');
    const shipped = readdirSync(join(dir, 'node_modules/nestjs-pg-idempotency/migrations'));
    if (shipped.some((name) => !name.endsWith('.sql'))) throw new Error(`migrations/ ships ${shipped.join(', ')}`);
    // The key console's CLI, as a user runs it from the app's folder.
    const counts = run('npx', ['--no-install', 'nestjs-pg-idempotency', 'keys', 'count'], dir, {
      ...process.env,
      DATABASE_URL: database.url,
    });
    if (!/^STATE\s+EXPIRED\s+ROWS/.test(counts))
      throw new Error(`npx nestjs-pg-idempotency keys count printed: ${counts}`);
  }
  // The README's links, and the docs' own, resolve in the installed package.
  const installed = join(work, apps[0].name, 'node_modules/nestjs-pg-idempotency');
  const { files, broken } = brokenLinks(installed);
  if (broken.length > 0) throw new Error(`broken links in the installed package:\n${broken.join('\n')}`);
  console.log(`== links: every relative link of ${files.length} Markdown files of the installed package resolves`);
  console.log(
    'smoke-pack: the packed tarball works in a CJS NestJS 11 / TypeORM 0.3 app and an ESM NestJS 12 / TypeORM 1 app',
  );
} catch (error) {
  if (error.stdout) console.error(error.stdout);
  console.error(`smoke-pack: failed (${error.message.split('\n')[0]}); work folder: ${work}`);
  process.exitCode = 1;
} finally {
  await database?.stop();
  if (!process.exitCode) rmSync(work, { recursive: true, force: true });
}
