// `npm run samples`: first, every TypeScript sample of the README and docs/ is the region of a
// sample app it names (scripts/doc-samples.mjs); then each app of sample/ is installed on its own
// from its own package.json, with the packed tarball in place of the registry's
// nestjs-pg-idempotency, built as the Nest CLI builds it, and run with its check.mjs against
// PostgreSQL (DATABASE_URL's server, else embedded; a database of its own per app) and the
// brokers it needs (found as the test suites find them). Nothing of the repository's is added to
// an app: what it needs is in its folder. Needs the npm registry. Run after `npm run build`.
//   node scripts/sample-apps.mjs [app ...]     only these apps (and no check of the pages)
//   SAMPLES_WORK=<folder>                      keep the apps there (and their node_modules) for the next run
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { run, startPostgres } from './packed-app.mjs';
import { checkDocSamples } from './doc-samples.mjs';
import { findServices, SERVICES } from '../test/support/find-services.mjs';

const root = resolve(import.meta.dirname, '..');
const samples = join(root, 'sample');
const work = process.env.SAMPLES_WORK ?? mkdtempSync(join(tmpdir(), 'nestjs-pg-idempotency-samples-'));
const named = process.argv.slice(2);
const apps = readdirSync(samples, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(samples, entry.name, 'check.mjs')))
  .map((entry) => entry.name)
  .filter((name) => named.length === 0 || named.includes(name));
if (named.some((name) => !apps.includes(name))) throw new Error(`no such sample app: ${named.join(', ')}`);

/** The ids of the services (SERVICES) an app needs: those whose variable its check reads. */
function servicesOf(app) {
  const text = readFileSync(join(samples, app, 'check.mjs'), 'utf8');
  return Object.keys(SERVICES).filter((id) => text.includes(SERVICES[id].variable));
}

let database;
let failed = false;
try {
  if (named.length === 0) {
    const drift = checkDocSamples(root);
    if (drift.length > 0) throw new Error(`pages that do not show their sample apps as they are:\n${drift.join('\n')}`);
    console.log('== samples: every TypeScript sample of README.md and docs/ is cut from a sample app as it stands');
  }
  mkdirSync(work, { recursive: true });
  for (const name of readdirSync(work)) if (name.endsWith('.tgz')) rmSync(join(work, name));
  run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], root, process.env, 'pipe');
  const tarball = join(
    work,
    readdirSync(work).find((name) => name.endsWith('.tgz')),
  );
  const { lines } = await findServices();
  for (const line of lines) console.log(line);
  const missing = new Set((process.env.TEST_MISSING_SERVICES ?? '').split(',').filter(Boolean));
  database = await startPostgres(root);
  const { default: pg } = await import('pg');
  cpSync(join(samples, 'check-kit.mjs'), join(work, 'check-kit.mjs'));
  const results = [];
  for (const app of apps) {
    const lacking = servicesOf(app).filter((id) => missing.has(id));
    if (lacking.length > 0) {
      console.log(`== ${app}: skipped, ${lacking.map((id) => SERVICES[id].name).join(' and ')} not answering`);
      continue;
    }
    const startedAt = performance.now();
    const folder = join(work, app);
    // The app's own files, over a kept node_modules.
    for (const name of existsSync(folder) ? readdirSync(folder) : []) {
      if (name !== 'node_modules') rmSync(join(folder, name), { recursive: true, force: true });
    }
    cpSync(join(samples, app), folder, {
      recursive: true,
      filter: (source) => !/[/\\](node_modules|dist)([/\\]|$)/.test(source.slice(samples.length)),
    });
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    if (!manifest.dependencies?.['nestjs-pg-idempotency'])
      throw new Error(`${app}: its package.json does not depend on nestjs-pg-idempotency`);
    manifest.dependencies['nestjs-pg-idempotency'] = `file:${tarball}`;
    writeFileSync(join(folder, 'package.json'), JSON.stringify(manifest, null, 2));
    const name = `sample_${app.replace(/\W/g, '_')}_${process.pid}`.slice(0, 63);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      // A run killed before its cleanup left this name behind: start afresh.
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
    } catch (error) {
      await admin.end();
      throw error;
    }
    const url = new URL(database.url);
    url.pathname = `/${name}`;
    // Prisma's generate looks for a schema engine it never runs here: any executable stands in.
    const env = { ...process.env, DATABASE_URL: url.href, PRISMA_SCHEMA_ENGINE_BINARY: process.execPath };
    try {
      const step = (script) => {
        if (script !== 'check' && !manifest.scripts?.[script]) return;
        try {
          return run('npm', ['run', '--silent', script], folder, env, 'pipe');
        } catch (error) {
          throw new Error(`npm run ${script} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
        }
      };
      // The module's package is new each run: npm keeps a package whose version did not change.
      rmSync(join(folder, 'node_modules/nestjs-pg-idempotency'), { recursive: true, force: true });
      run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], folder, env, 'pipe');
      step('build');
      step('migrate');
      const output = step('check');
      const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
      console.log(`== ${app} (${seconds} s)\n${output.trimEnd()}`);
      results.push(app);
    } catch (error) {
      throw new Error(`${app}: ${error.message}`);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }
  console.log(`samples: ${results.length} sample apps built and checked against the packed tarball`);
} catch (error) {
  console.error(`samples: failed: ${error.message}`);
  console.error(`work folder: ${work}`);
  failed = true;
  process.exitCode = 1;
} finally {
  await database?.stop();
  if (!failed && !process.env.SAMPLES_WORK) rmSync(work, { recursive: true, force: true });
}
