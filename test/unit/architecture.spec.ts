import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The import rules of docs/development.md ("Architecture"), read from src/'s imports: each part
 * of the tree, and the parts it may import. A file imports its own part freely.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  'shared root': ['options'],
  key: [],
  options: ['key', 'store'],
  observe: ['options'],
  'hosts port': ['key', 'options'],
  'hosts/wire': ['hosts port', 'options'],
  'hosts/typeorm': ['hosts port', 'hosts/wire', 'key', 'options'],
  'hosts/pg': ['hosts port', 'hosts/wire', 'key', 'options'],
  store: ['hosts port', 'key', 'options'],
  core: ['hosts port', 'key', 'observe', 'options', 'store'],
  tools: ['hosts port', 'hosts/pg', 'hosts/typeorm', 'key', 'options'],
  http: ['core', 'hosts port', 'key', 'observe', 'options', 'store'],
  messages: ['core', 'hosts port', 'key', 'observe', 'options', 'store'],
  jobs: ['core', 'options'],
  graphql: ['core', 'key', 'options'],
  bootstrap: ['graphql', 'http', 'messages', 'options'],
  outbox: ['hosts port', 'key', 'observe', 'options', 'store'],
  operations: ['core', 'hosts port', 'key', 'observe', 'options', 'store'],
  client: [],
  testing: [],
};

/** Files at the top of src/ that any part may import: constants, errors, the module's options definition. */
const SHARED_ROOT = new Set(['idempotency.constants.ts', 'idempotency.errors.ts', 'idempotency.module-definition.ts']);
/** Files at the top of src/ that wire the parts together: they import any part. */
const WIRING_ROOT = new Set(['idempotency.module.ts', 'index.ts']);

/** The part of the tree a file of src/ (path relative to src/) belongs to. */
function partOf(file: string): string {
  const [first, second] = file.split('/');
  if (second === undefined)
    return SHARED_ROOT.has(first) ? 'shared root' : WIRING_ROOT.has(first) ? 'wiring root' : `root file ${first}`;
  if (first === 'hosts') return ['wire', 'typeorm', 'pg'].includes(second) ? `hosts/${second}` : 'hosts port';
  return first;
}

interface Import {
  from: string;
  to: string;
}

/** Why an import breaks the rules, or `undefined` when it keeps them. */
function violation({ from, to }: Import, subpathEntries: ReadonlySet<string>): string | undefined {
  const [source, target] = [partOf(from), partOf(to)];
  if (subpathEntries.has(dirname(to)) && to.endsWith('/index.ts') && dirname(from) !== dirname(to)) {
    return `${from} imports ${to}, a subpath entry of the package: import the file it exports`;
  }
  if (source === 'wiring root' || target === 'shared root' || source === target) return undefined;
  if (source === 'hosts/typeorm' || source === 'hosts/pg') {
    if (target === 'hosts/typeorm' || target === 'hosts/pg')
      return `${from} (an adapter) imports ${to} (another adapter)`;
  }
  const allowed = MAY_IMPORT[source];
  if (allowed === undefined)
    return `${from} is in no part of the architecture (${source}): place it, and add its rules`;
  return allowed.includes(target)
    ? undefined
    : `${from} (${source}) imports ${to} (${target}), which ${source} may not import`;
}

/** Every relative import of src/'s files but the demo's, as paths relative to src/. */
function importsOfSrc(): Import[] {
  const files = (readdirSync('src', { recursive: true }) as string[]).filter(
    (file) => file.endsWith('.ts') && !file.startsWith('demo/'),
  );
  return files.flatMap((from) =>
    [...readFileSync(join('src', from), 'utf8').matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)].map(
      ([, specifier]) => ({
        from,
        to: relative('src', normalize(join('src', dirname(from), specifier))).replace(/\.js$/, '.ts'),
      }),
    ),
  );
}

/** The folders of src/ that the package exports as subpaths (`nestjs-pg-idempotency/cls`…), from package.json. */
function subpathEntries(): Set<string> {
  const { exports } = JSON.parse(readFileSync('package.json', 'utf8')) as {
    exports: Record<string, { import?: { default: string } } | string>;
  };
  return new Set(
    Object.entries(exports)
      .filter(([name, target]) => name !== '.' && typeof target === 'object' && target.import)
      .map(([, target]) =>
        dirname((target as { import: { default: string } }).import.default.replace(/^\.\/dist\/esm\//, '')),
      ),
  );
}

describe('the architecture: src/ imports only what docs/development.md allows', () => {
  const entries = subpathEntries();

  it('reads the imports and the subpath entries it checks', () => {
    const imports = importsOfSrc();
    expect(imports.length).toBeGreaterThan(300);
    expect([...entries].sort()).toEqual([
      'client',
      'http/openapi',
      'messages/jetstream',
      'operations/terminus',
      'testing',
      'tools/cls',
      'tools/drizzle',
      'tools/prisma',
    ]);
  });

  it('no import of src/ crosses a rule', () => {
    const broken = importsOfSrc()
      .map((edge) => violation(edge, entries))
      .filter((why): why is string => why !== undefined);
    expect(broken).toEqual([]);
  });

  it.each<[Import, RegExp]>([
    [{ from: 'http/idempotency.interceptor.ts', to: 'messages/message-run.ts' }, /\(http\) imports .* \(messages\)/],
    [{ from: 'core/exactly-once.ts', to: 'http/problems.ts' }, /\(core\) imports .* \(http\)/],
    [{ from: 'core/exactly-once.ts', to: 'hosts/typeorm/typeorm-host.ts' }, /\(core\) imports .* \(hosts\/typeorm\)/],
    [{ from: 'hosts/pg/pool-host.ts', to: 'hosts/typeorm/typeorm-failures.ts' }, /another adapter/],
    [{ from: 'http/run/key-run.ts', to: 'tools/typeorm/idempotency-transaction.ts' }, /\(http\) imports .* \(tools\)/],
    [
      { from: 'messages/message-run.ts', to: 'operations/sweeper/idempotency.sweeper.ts' },
      /\(messages\) imports .* \(operations\)/,
    ],
    [{ from: 'key/scoped-key.ts', to: 'options/settings.ts' }, /\(key\) imports .* \(options\)/],
    [{ from: 'tools/cls/self-check.ts', to: 'tools/prisma/index.ts' }, /a subpath entry/],
    [{ from: 'surprise/new.ts', to: 'core/exactly-once.ts' }, /in no part of the architecture/],
  ])('refuses %j', (edge, why) => {
    expect(violation(edge, entries)).toMatch(why);
  });
});
