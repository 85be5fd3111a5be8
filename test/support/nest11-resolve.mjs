// The resolve hook behind nest11-stack.mjs (a module.register() hook, run off the main thread).
let parentURL;

export function initialize({ compat }) {
  parentURL = new URL('package.json', compat).href;
}

let reported = false;

/**
 * `@nestjs/*`, `typeorm`, `nestjs-cls` and `@nestjs-cls/*` (and their subpaths) resolve as if
 * imported from compat/nest11 (whose CommonJS copies then require compat/nest11's NestJS). The
 * first `@nestjs/core` resolved is reported on stderr: the proof that the demo loads it from there.
 */
export async function resolve(specifier, context, next) {
  if (
    !/^(?:@nestjs\/|@nestjs-cls\/|nestjs-cls(?:\/|$)|typeorm(?:\/|$))/.test(specifier) ||
    context.parentURL?.includes('/compat/nest11/')
  ) {
    return next(specifier, context);
  }
  // nestjs-cls 7's ESM build deep-imports @nestjs/core paths that only NestJS 12 exports: its
  // CommonJS build (what a NestJS 11 app loads) is taken instead.
  const conditions = /^(?:@nestjs-cls\/|nestjs-cls)/.test(specifier)
    ? ['node', 'require', 'default']
    : context.conditions;
  const resolved = await next(specifier, { ...context, parentURL, conditions });
  if (specifier === '@nestjs/core' && !reported) {
    reported = true;
    process.stderr.write(`nest11-stack: @nestjs/core resolved to ${resolved.url}\n`);
  }
  return resolved;
}
