// `npm run test:loaded`: the whole suite (`npm test`) while one busy loop per core keeps every core
// loaded, as on a shared machine in a slow hour. A test that passes here waits on conditions, not
// on the machine's speed; run it after writing a test that waits for anything.
//   npm run test:loaded                         (embedded PostgreSQL)
//   DATABASE_URL=postgres://… npm run test:loaded
//   npm run test:loaded -- test/e2e/processes.spec.ts   (arguments go to Jest)
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

const loops = Array.from({ length: availableParallelism() }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
const stopLoops = () => loops.forEach((loop) => loop.kill('SIGKILL'));
process.on('exit', stopLoops);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
console.log(`test:loaded: ${loops.length} busy loops (one per core) run beside npm test`);

const test = spawn('npm', ['test', '--', ...process.argv.slice(2)], { stdio: 'inherit' });
test.on('exit', (code, signal) => {
  stopLoops();
  process.exit(code ?? (signal ? 1 : 0));
});
