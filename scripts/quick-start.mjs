// `npm run quick-start`: the README's quick start, done as a reader does it. The Nest CLI makes a
// new app with its defaults (an ESM app with @nestjs/observe; `--skip-skills` only leaves out the
// coding agents' files, which the registry here lacks), its own starter files and nothing of ours; the README's first ```sh block
// runs in it as written (the packed tarball installed in place of the registry's
// nestjs-pg-idempotency), the ```ts block replaces the file the README names, and the last ```sh
// blocks start the app and send their curl twice (on a free port instead of 3000): a 201, then the
// same bytes with Idempotent-Replayed: true, one payment row; the same key with another body is a
// 422. PostgreSQL: DATABASE_URL's server (a database of its own), else embedded. Needs the npm
// registry. Run after `npm run build`.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startPostgres } from './packed-app.mjs';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'nestjs-pg-idempotency-quick-start-'));
const app = join(work, 'payments');
/** How long one command may run (the CLI's install, the README's commands) before it is killed. */
const COMMAND_TIMEOUT_MS = 10 * 60_000;

/** The README's quick start: its shell commands, the file to replace and its text. */
function quickStart() {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Quick start'),
    readme.indexOf('\n## ', readme.indexOf('## Quick start') + 3),
  );
  const blocks = [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, lang, text]) => ({ lang, text }));
  const shell = blocks.filter((block) => block.lang === 'sh');
  const code = blocks.find((block) => block.lang === 'ts');
  const [, file, module, into, line] =
    /Add this file as `([^`]+)`, then `(\w+)` to the `imports` of `\w+`\s+in `([^`]+)` \(with `([^`]+)`\)/.exec(
      section,
    ) ?? [];
  if (shell.length < 2 || !code || !file)
    throw new Error(
      "the README's quick start has lost its shape: two ```sh blocks, a ```ts block, and 'Add this file as `file`, then `Module` to the `imports` of `AppModule` in `file` (with `import …`)'",
    );
  // The blocks after the file: the command that starts the app, then the requests.
  const later = shell.slice(1).flatMap((block) =>
    block.text
      .replace(/\\\n\s*/g, '')
      .trim()
      .split('\n'),
  );
  return { install: shell[0].text, file, code: code.text, module, into, line, run: later };
}

/** Runs `script` with bash in `cwd`; its output is returned, and printed when it fails. */
function bash(script, cwd, env) {
  try {
    return execFileSync('bash', ['-euo', 'pipefail', '-c', script], {
      cwd,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: COMMAND_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
  } catch (error) {
    throw new Error(`${script}\nfailed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
  }
}

let database;
let server;
let failed = false;
try {
  const { install, file, code, module, into, line, run } = quickStart();
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
    cwd: root,
    stdio: 'ignore',
  });
  const tarball = join(
    work,
    readdirSync(work).find((name) => name.endsWith('.tgz')),
  );
  console.log('== quick start: npx @nestjs/cli@12 new payments');
  execFileSync(
    'npx',
    ['--yes', '@nestjs/cli@12', 'new', 'payments', '--skip-git', '--package-manager', 'npm', '--skip-skills'],
    {
      cwd: work,
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: COMMAND_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    },
  );
  database = await startPostgres(root);
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const name = `quick_start_${process.pid}`;
  try {
    // A run killed before its cleanup left this name behind: start afresh.
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(database.url);
  url.pathname = `/${name}`;
  const env = { ...process.env, DATABASE_URL: url.href };
  // As written, but for where the package comes from.
  const installing = install.replace(/(npm install .*)\bnestjs-pg-idempotency\b/, `$1${tarball}`);
  console.log(`== quick start: the README's commands\n${installing.trimEnd()}`);
  bash(installing, app, env);
  writeFileSync(join(app, file), code);
  // The README's edit of the CLI's module: its import line, and the module first in `imports`.
  const appModule = readFileSync(join(app, into), 'utf8');
  if (!/imports: \[/.test(appModule)) throw new Error(`${into} has no imports: [ to add ${module} to:\n${appModule}`);
  writeFileSync(join(app, into), `${line}\n${appModule.replace(/imports: \[/, `imports: [${module}, `)}`);
  const port = 30_000 + (process.pid % 20_000);
  const [start, ...requests] = run;
  console.log(`== quick start: ${start} (PORT=${port})`);
  // A process group of its own: npm, the Nest CLI and the app stop together.
  server = spawn('bash', ['-c', `exec ${start}`], {
    cwd: app,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 120_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}`).then(
      () => true,
      () => false,
    ))
  ) {
    if (server.exitCode !== null || Date.now() > deadline) throw new Error(`the app did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const curl = requests.find((line) => line.startsWith('curl '))?.replace('localhost:3000', `localhost:${port}`);
  if (!curl) throw new Error("the quick start's last block has no curl");
  const answer = (text) => {
    const [head, ...body] = text.split(/\r\n\r\n/);
    return { status: Number(/^HTTP\/[\d.]+ (\d+)/.exec(head)?.[1]), head, body: body.join('\r\n\r\n') };
  };
  const first = answer(bash(curl, app, env));
  const again = answer(bash(curl, app, env));
  const other = answer(bash(curl.replace('"amount":1250', '"amount":99'), app, env));
  const client = new pg.Client({ connectionString: url.href });
  await client.connect();
  const { rows } = await client.query('SELECT count(*)::int AS n FROM payments');
  await client.end();
  const problems = [
    first.status !== 201 && `the first curl answered ${first.status}: ${first.body}`,
    (again.status !== 201 || again.body !== first.body) &&
      `the same curl again answered ${again.status}: ${again.body}`,
    !/^idempotent-replayed: true$/im.test(again.head) && 'the second answer is not marked Idempotent-Replayed: true',
    other.status !== 422 && `the same key with another body answered ${other.status}: ${other.body}`,
    rows[0].n !== 1 && `${rows[0].n} payment rows, not 1`,
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`${problems.join('\n')}\nthe app's output:\n${output}`);
  console.log(`quick start: ${first.status}, then the same bytes replayed; 422 for another body; 1 payment row`);
} catch (error) {
  console.error(`quick start: failed: ${error.message}`);
  console.error(`work folder: ${work}`);
  failed = true;
  process.exitCode = 1;
} finally {
  if (server && server.exitCode === null) {
    process.kill(-server.pid, 'SIGTERM');
    const killed = setTimeout(() => process.kill(-server.pid, 'SIGKILL'), 10_000);
    await once(server, 'exit');
    clearTimeout(killed);
  }
  if (database) {
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS quick_start_${process.pid} WITH (FORCE)`);
    await admin.end();
    await database.stop();
  }
  if (!failed) rmSync(work, { recursive: true, force: true });
}
