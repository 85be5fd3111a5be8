// The resolve hook behind nest11-stack.mjs (a module.register() hook, run off the main thread).
let parentURL;

export function initialize({ compat }) {
  parentURL = new URL('package.json', compat).href;
}

let reported = false;

/**
 * `@nestjs/*` and `typeorm` (and their subpaths) resolve as if imported from compat/nest11. The
 * first `@nestjs/core` resolved is reported on stderr: the proof that the demo loads it from there.
 */
export async function resolve(specifier, context, next) {
  if (!/^(?:@nestjs\/|typeorm(?:\/|$))/.test(specifier) || context.parentURL?.includes('/compat/nest11/')) {
    return next(specifier, context);
  }
  const resolved = await next(specifier, { ...context, parentURL });
  if (specifier === '@nestjs/core' && !reported) {
    reported = true;
    process.stderr.write(`nest11-stack: @nestjs/core resolved to ${resolved.url}\n`);
  }
  return resolved;
}
