// Decorators applied by hand, as TypeScript would compile them, for the test apps written in plain
// JavaScript (each its own process): drizzle-host.app.mjs, message-consumer.app.mjs.

/** Applies method and parameter decorators to `Class.prototype[name]`. */
export function decorate(Class, name, methodDecorators, parameterDecorators) {
  const descriptor = Object.getOwnPropertyDescriptor(Class.prototype, name);
  Reflect.defineMetadata(
    'design:paramtypes',
    parameterDecorators.map(() => Object),
    Class.prototype,
    name,
  );
  parameterDecorators.forEach((decorator, index) => decorator(Class.prototype, name, index));
  Object.defineProperty(
    Class.prototype,
    name,
    Reflect.decorate(methodDecorators, Class.prototype, name, descriptor) ?? descriptor,
  );
}
