import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The import rules of docs/development.md ("Architecture"), read from src/'s imports (relative
 * ones and packages, `import`, `import type`, `export … from` and `import()`): each part of the
 * tree, and the parts it may import. A file imports its own part freely, within the rules below.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  'shared root': ['options'],
  key: [],
  options: ['key', 'store'],
  observe: ['options'],
  'hosts port': ['key'],
  'hosts/wire': ['hosts port', 'options'],
  'hosts/typeorm': ['hosts port', 'hosts/wire', 'key', 'options'],
  'hosts/pg': ['hosts port', 'hosts/wire', 'key', 'options'],
  store: ['hosts port', 'key'],
  core: ['hosts port', 'key', 'observe', 'options', 'store'],
  tools: ['hosts port', 'hosts/pg', 'hosts/typeorm', 'key', 'options'],
  http: ['core', 'hosts port', 'key', 'observe', 'options', 'store'],
  messages: ['core', 'hosts port', 'key', 'observe', 'options', 'store'],
  'messages/jetstream': ['messages', 'core', 'hosts port', 'key', 'observe', 'options', 'store', 'outbox'],
  jobs: ['core', 'options'],
  graphql: ['core', 'key', 'options'],
  bootstrap: ['graphql', 'http', 'messages', 'options'],
  outbox: ['hosts port', 'key', 'observe', 'options', 'store'],
  operations: ['core', 'hosts port', 'key', 'observe', 'options', 'store'],
  client: [],
  testing: [],
};

/** The parts that are entries: each maps its input to the core's public face, and nothing deeper. */
const ENTRIES = new Set(['http', 'messages', 'messages/jetstream', 'graphql', 'jobs']);

/** The core's public face: what an entry may import of `core/` (its reserve/, hold/ and gates/ are the core's own). */
const CORE_FACE = new Set([
  'core/exactly-once.ts',
  'core/held-run.ts',
  'core/run-rules.ts',
  'core/run-outcome.ts',
  'core/idempotency.service.ts',
  'core/handler-settings.ts',
  'core/key-ttls.ts',
  'core/transient-failure.ts',
]);

/** Each entry's framework packages, which no other part of src/ imports. */
const ENTRY_PACKAGES: Record<string, RegExp> = {
  http: /^(@nestjs\/(platform-express|platform-fastify|swagger)|express|fastify)$/,
  messages: /^(@nestjs\/microservices|amqplib|amqp-connection-manager|nats|@nats-io\/.+)$/,
  graphql: /^(@nestjs\/(graphql|apollo|mercurius)|graphql|@apollo\/server|mercurius)$/,
  jobs: /^(bullmq|@nestjs\/bullmq)$/,
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
  if (first === 'messages' && second === 'jetstream') return 'messages/jetstream';
  return first;
}

interface Import {
  from: string;
  /** A file of src/ (relative to src/), for a relative import. */
  to?: string;
  /** A package's name, for any other. */
  package?: string;
}

/** The subpath entry folder `file` lies in, if any. */
function subpathOf(file: string, subpaths: ReadonlySet<string>): string | undefined {
  return [...subpaths].find((folder) => file.startsWith(`${folder}/`));
}

/** Why an import breaks the rules, or `undefined` when it keeps them. */
function violation(edge: Import, subpaths: ReadonlySet<string>): string | undefined {
  const { from, to } = edge;
  const source = partOf(from);
  if (edge.package !== undefined) {
    const owner = Object.keys(ENTRY_PACKAGES).find((entry) => ENTRY_PACKAGES[entry].test(edge.package!));
    if (owner !== undefined && from.split('/')[0] !== owner)
      return `${from} imports ${edge.package}, the framework package of another entry (${owner}/)`;
    return undefined;
  }
  const target = partOf(to!);
  const subpath = subpathOf(to!, subpaths);
  if (subpath !== undefined && subpathOf(from, subpaths) !== subpath)
    return `${from} imports ${to}, a file of the subpath entry ${subpath}/: nothing outside a subpath imports it`;
  if (source === 'wiring root' || target === 'shared root') return undefined;
  if (source === 'core' && to!.startsWith('store/outbox/'))
    return `${from} imports ${to}: the outbox's SQL lives with the outbox, the core writes effects through CommittedEffect`;
  if (source === target) return undefined;
  if (source === 'hosts/typeorm' || source === 'hosts/pg') {
    if (target === 'hosts/typeorm' || target === 'hosts/pg')
      return `${from} (an adapter) imports ${to} (another adapter)`;
  }
  const allowed = MAY_IMPORT[source];
  if (allowed === undefined)
    return `${from} is in no part of the architecture (${source}): place it, and add its rules`;
  if (!allowed.includes(target)) return `${from} (${source}) imports ${to} (${target}), which ${source} may not import`;
  if (ENTRIES.has(source) && target === 'core' && !CORE_FACE.has(to!))
    return `${from} (an entry) imports ${to}, which is not the core's public face (${[...CORE_FACE].join(', ')})`;
  return undefined;
}

/** Every import of src/'s files but the demo's: relative ones as paths relative to src/, the others as packages. */
function importsOfSrc(): Import[] {
  const files = (readdirSync('src', { recursive: true }) as string[]).filter(
    (file) => file.endsWith('.ts') && !file.startsWith('demo/'),
  );
  return files.flatMap((from) =>
    [...readFileSync(join('src', from), 'utf8').matchAll(/(?:\bfrom\s*|\bimport\(\s*|^import\s+)'([^']+)'/gm)].map(
      ([, specifier]): Import => {
        if (!specifier.startsWith('.')) {
          const [scope, name] = specifier.split('/');
          return { from, package: scope.startsWith('@') ? `${scope}/${name}` : scope };
        }
        return { from, to: relative('src', normalize(join('src', dirname(from), specifier))).replace(/\.js$/, '.ts') };
      },
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

/** The loops of a directed graph (its strongly connected components of more than one node), each sorted. */
function loopsOf(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const loop: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      loop.push(member);
    } while (member !== node);
    if (loop.length > 1) loops.push(loop.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return loops;
}

/** The loops among src/'s folders (a file's folder importing a folder that imports it back); the root's files are shared. */
function folderLoops(imports: readonly Import[]): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const { from, to } of imports) {
    if (to === undefined) continue;
    const [source, target] = [dirname(from), dirname(to)];
    if (source === target || source === '.' || target === '.') continue;
    edges.set(source, (edges.get(source) ?? new Set()).add(target));
  }
  return loopsOf(edges);
}

/** The loops the table allows. */
function tableLoops(table: Record<string, readonly string[]>): string[][] {
  return loopsOf(new Map(Object.entries(table).map(([part, allowed]) => [part, new Set(allowed)])));
}

describe('the architecture: src/ imports only what docs/development.md allows', () => {
  const subpaths = subpathEntries();
  const imports = importsOfSrc();

  it('reads the imports and the subpath entries it checks', () => {
    expect(imports.filter((edge) => edge.to !== undefined).length).toBeGreaterThan(300);
    expect(imports.filter((edge) => edge.package !== undefined).length).toBeGreaterThan(100);
    expect(imports).toContainEqual({ from: 'core/exactly-once.ts', to: 'core/held-run.ts' });
    expect(imports).toContainEqual({
      from: 'messages/jetstream/jetstream-server.ts',
      package: '@nestjs/microservices',
    });
    expect([...subpaths].sort()).toEqual([
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
    const broken = imports.map((edge) => violation(edge, subpaths)).filter((why): why is string => why !== undefined);
    expect(broken).toEqual([]);
  });

  it('no folder of src/ imports a folder that imports it back', () => {
    expect(folderLoops(imports)).toEqual([]);
  });

  it('the table allows no loop between parts', () => {
    expect(tableLoops(MAY_IMPORT)).toEqual([]);
  });

  it.each<[Import, RegExp]>([
    [{ from: 'http/http-entry.ts', to: 'messages/message-run.ts' }, /\(http\) imports .* \(messages\)/],
    [{ from: 'core/exactly-once.ts', to: 'http/problems/problems.ts' }, /\(core\) imports .* \(http\)/],
    [{ from: 'core/exactly-once.ts', to: 'hosts/typeorm/typeorm-host.ts' }, /\(core\) imports .* \(hosts\/typeorm\)/],
    [{ from: 'hosts/pg/pool-host.ts', to: 'hosts/typeorm/typeorm-failures.ts' }, /another adapter/],
    [{ from: 'http/run/key-run.ts', to: 'tools/typeorm/idempotency-transaction.ts' }, /\(http\) imports .* \(tools\)/],
    [
      { from: 'messages/message-run.ts', to: 'operations/sweeper/idempotency.sweeper.ts' },
      /\(messages\) imports .* \(operations\)/,
    ],
    [{ from: 'key/scoped-key.ts', to: 'options/settings.ts' }, /\(key\) imports .* \(options\)/],
    [{ from: 'surprise/new.ts', to: 'core/exactly-once.ts' }, /in no part of the architecture/],
    // a subpath entry's files, whoever imports them: another subpath, or the main entry
    [{ from: 'tools/cls/self-check.ts', to: 'tools/prisma/index.ts' }, /a file of the subpath entry tools\/prisma/],
    [
      { from: 'tools/cls/prisma-transactions.ts', to: 'tools/prisma/idempotent-prisma.ts' },
      /a file of the subpath entry tools\/prisma/,
    ],
    [{ from: 'http/http-entry.ts', to: 'http/openapi/idempotent-document.ts' }, /subpath entry http\/openapi/],
    // an entry reaches the core through its public face only
    [{ from: 'http/http-entry.ts', to: 'core/reserve/key-reserver.ts' }, /not the core's public face/],
    [{ from: 'messages/message-run.ts', to: 'core/hold/carry-out.ts' }, /not the core's public face/],
    // the outbox's SQL is the outbox's
    [{ from: 'core/hold/lease-hold.ts', to: 'store/outbox/outbox.sql.ts' }, /the outbox's SQL lives with the outbox/],
    // another entry's framework
    [
      { from: 'http/http-entry.ts', package: '@nestjs/microservices' },
      /framework package of another entry \(messages\/\)/,
    ],
    [{ from: 'core/exactly-once.ts', package: 'graphql' }, /framework package of another entry \(graphql\/\)/],
    [{ from: 'graphql/graphql-entry.ts', package: 'bullmq' }, /framework package of another entry \(jobs\/\)/],
  ])('refuses %j', (edge, why) => {
    expect(violation(edge, subpaths)).toMatch(why);
  });

  it("lets through what the rules allow: an entry on the core's face, a subpath on its own files, an entry on its framework", () => {
    for (const edge of [
      { from: 'http/http-entry.ts', to: 'core/exactly-once.ts' },
      { from: 'tools/prisma/index.ts', to: 'tools/prisma/idempotent-prisma.ts' },
      { from: 'messages/jetstream/jetstream-server.ts', package: '@nestjs/microservices' },
      { from: 'core/reserve/key-reserver.ts', to: 'core/hold/lease-hold.ts' },
    ])
      expect(violation(edge, subpaths)).toBeUndefined();
  });

  it('finds a folder loop planted in the imports: a hold that imports the reservation', () => {
    const planted = [...imports, { from: 'core/hold/lease-hold.ts', to: 'core/reserve/key-reserver.ts' }];
    expect(folderLoops(planted)).toEqual([['core/hold', 'core/reserve']]);
  });

  it('finds a loop planted in the table: the port allowed options again (options → store → the port → options)', () => {
    expect(tableLoops({ ...MAY_IMPORT, 'hosts port': ['key', 'options'] })).toEqual([
      ['hosts port', 'options', 'store'],
    ]);
  });
});
