// The resolve hook behind nest11-stack.mjs (a module.register() hook, run off the main thread).
let parentURL;

export function initialize({ compat }) {
  parentURL = new URL('package.json', compat).href;
}

/** `@nestjs/*` and `typeorm` (and their subpaths) resolve as if imported from compat/nest11. */
export function resolve(specifier, context, next) {
  if (/^(?:@nestjs\/|typeorm(?:\/|$))/.test(specifier) && !context.parentURL?.includes('/compat/nest11/')) {
    return next(specifier, { ...context, parentURL });
  }
  return next(specifier, context);
}
