// `npm run samples`: every TypeScript sample of the README and docs/ (each ```ts block a whole file)
// compiled against the packed tarball, in a fresh ESM NestJS 12 app that has every package the
// samples import; the samples that are whole apps (an AppModule with an @Idempotent() POST
// /payments) then run against PostgreSQL (DATABASE_URL's server, else embedded): a keyed request
// and its retry give one payment row and a replay. The samples are read from the installed
// package, as a reader of node_modules or the registry's page sees them. Any error fails the run.
// The files the samples import from the app itself (./payment.entity.js, ./schema.js, …) are in
// scripts/samples/app/; an encryption key a sample reads from its environment (IDEMPOTENCY_KEY_…)
// is a fresh one. Needs the npm registry (it installs the app's dependencies). Run after
// `npm run build`.
//   SAMPLES_APP=<folder> keeps the app there and reuses its installation on the next run.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ESM, generatePrismaClient, NEST12, run as runIn, startPostgres, writeTsconfig } from './packed-app.mjs';
import { samplesOf } from './samples/extract.mjs';

const root = resolve(import.meta.dirname, '..');
const own = join(root, 'scripts/samples');
const work = process.env.SAMPLES_APP ?? mkdtempSync(join(tmpdir(), 'nestjs-pg-idempotency-samples-'));
/** Errors are read, not printed: a compile error is told as the page and line it came from. */
const run = (command, args, cwd, env = process.env) => runIn(command, args, cwd, env, 'pipe');

/** Every package a sample imports, at the ranges the package's peers allow (newest). */
const dependencies = {
  ...NEST12,
  '@nestjs/microservices': '^12.0.0',
  '@nestjs/schedule': '^12.0.0',
  '@nestjs/swagger': '^12.0.0',
  '@nestjs/terminus': '^12.0.0',
  '@nestjs/typeorm': '^12.0.0',
  '@nestjs-cls/transactional': '^3.3.0',
  'nestjs-cls': '^6.3.0',
  '@prisma/adapter-pg': '^7.0.0',
  '@prisma/client': '^7.0.0',
  prisma: '^7.0.0',
  amqplib: '^2.0.0',
  stripe: '^23.0.0',
  '@nestjs/bullmq': '^12.0.0',
  '@nestjs/graphql': '^14.0.0',
  graphql: '^16.11.0',
  bullmq: '^6.0.0',
  ioredis: '^5.9.0',
  '@octokit/webhooks': '^14.0.0',
  'drizzle-orm': '^0.45.0',
  nats: '^2.29.0',
  typeorm: '^1.0.0',
  '@types/node': '^20.0.0',
  '@types/pg': '^8.11.0',
};

let database;
let failed = false;
try {
  mkdirSync(work, { recursive: true });
  for (const name of readdirSync(work)) if (name.endsWith('.tgz')) rmSync(join(work, name));
  run('npm', ['pack', '--silent', '--pack-destination', work], root);
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  writeFileSync(
    join(work, 'package.json'),
    JSON.stringify({
      name: 'samples',
      private: true,
      type: ESM.type,
      allowScripts: { '@prisma/engines': false },
      dependencies: { ...dependencies, 'nestjs-pg-idempotency': `file:./${tarball}` },
    }),
  );
  writeTsconfig(work, ESM.compilerOptions);
  console.log('== samples: npm install (the packed tarball and every package the samples import)');
  // A kept app takes the new tarball: npm keeps a package whose version did not change.
  rmSync(join(work, 'node_modules/nestjs-pg-idempotency'), { recursive: true, force: true });
  rmSync(join(work, 'package-lock.json'), { force: true });
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], work);
  rmSync(join(work, 'src'), { recursive: true, force: true });
  rmSync(join(work, 'dist'), { recursive: true, force: true });
  mkdirSync(join(work, 'src'));
  for (const name of readdirSync(join(own, 'app'))) {
    if (name.endsWith('.ts')) cpSync(join(own, 'app', name), join(work, 'src', name));
  }
  cpSync(join(own, 'run-app.ts'), join(work, 'src/run-app.ts'));
  mkdirSync(join(work, 'prisma'), { recursive: true });
  cpSync(join(own, 'app/schema.prisma'), join(work, 'prisma/schema.prisma'));
  generatePrismaClient(work);

  const installed = join(work, 'node_modules/nestjs-pg-idempotency');
  const samples = samplesOf(installed);
  for (const sample of samples) writeFileSync(join(work, 'src', sample.file), sample.code);
  console.log(`== samples: tsc over ${samples.length} samples of the installed package's README.md and docs/`);
  try {
    run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], work);
  } catch (error) {
    // Each error names the sample's file: point at the page and line it came from.
    const byFile = new Map(samples.map((sample) => [sample.file, sample]));
    const output = `${error.stdout ?? ''}`.replace(
      /^src\/([^()]+\.ts)\((\d+),(\d+)\)/gm,
      (whole, file, line, column) => {
        const sample = byFile.get(file);
        if (!sample) return whole;
        const [page, start] = sample.where.split(':');
        return `${page}:${Number(start) + Number(line)}:${column} (${file})`;
      },
    );
    throw new Error(`samples that do not compile:\n${output}`);
  }

  const apps = samples.filter(
    (sample) =>
      /export class AppModule\b/.test(sample.code) &&
      /@Idempotent\(/.test(sample.code) &&
      /@Controller\('payments'\)/.test(sample.code),
  );
  if (apps.length === 0) throw new Error('no sample is a whole app');
  database = await startPostgres(root);
  const server = database.url;
  const { default: pg } = await import('pg');
  for (const sample of apps) {
    const name = `samples_${process.pid}_${sample.file.replace(/\W/g, '_')}`.slice(0, 63);
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    const app = new pg.Client({ connectionString: url.href });
    try {
      await app.connect();
      const migration = readdirSync(join(installed, 'migrations')).find((file) => file.endsWith('.sql'));
      await app.query(readFileSync(join(installed, 'migrations', migration), 'utf8'));
      await app.query(readFileSync(join(own, 'app/tables.sql'), 'utf8'));
      await app.end();
      // The encryption keys a sample reads from its environment: fresh ones.
      const keys = Object.fromEntries(
        [...sample.code.matchAll(/process\.env\.(IDEMPOTENCY_KEY_\w+)/g)].map(([, name]) => [
          name,
          randomBytes(32).toString('base64'),
        ]),
      );
      const output = run(process.execPath, ['dist/run-app.js', `./${sample.file.replace(/\.ts$/, '.js')}`], work, {
        ...process.env,
        ...keys,
        DATABASE_URL: url.href,
      });
      console.log(`   ${sample.where}: ${output.trim()}`);
    } catch (error) {
      throw new Error(`${sample.where}, run as an app: ${error.stderr || error.stdout || error.message}`);
    } finally {
      await app.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }
  console.log(`samples: ${samples.length} samples compile against the packed tarball; ${apps.length} whole apps run`);
} catch (error) {
  console.error(`samples: failed: ${error.message}`);
  console.error(`work folder: ${work}`);
  failed = true;
  process.exitCode = 1;
} finally {
  await database?.stop();
  if (!failed && !process.env.SAMPLES_APP) rmSync(work, { recursive: true, force: true });
}
