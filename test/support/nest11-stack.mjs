// `node --import ./test/support/nest11-stack.mjs dist/esm/demo/main.js`: the built demo on
// NestJS 11 and TypeORM 0.3 from compat/nest11 (`npm run test:nest11` installs it), the way
// jest.nest11.config.mjs maps the suites onto them. Every `@nestjs/*` and `typeorm` import the
// demo and the library make resolves from compat/nest11/node_modules; everything else (rxjs, pg,
// class-validator …) from the root install, as in an app (reflect-metadata also has TypeORM
// 0.3's copy there, the same 0.2 version, which shares one metadata registry between copies).
import { existsSync, readFileSync } from 'node:fs';
import { register } from 'node:module';

const compat = new URL('../../compat/nest11/node_modules/', import.meta.url);
if (!existsSync(new URL('@nestjs/core/package.json', compat))) {
  throw new Error('compat/nest11 is not installed: run `npm ci --prefix compat/nest11` first');
}
register('./nest11-resolve.mjs', import.meta.url, { data: { compat: compat.href } });

const versionOf = (name) => JSON.parse(readFileSync(new URL(`${name}/package.json`, compat), 'utf8')).version;
process.stderr.write(
  `nest11-stack: @nestjs/core ${versionOf('@nestjs/core')}, typeorm ${versionOf('typeorm')} (compat/nest11)\n`,
);
