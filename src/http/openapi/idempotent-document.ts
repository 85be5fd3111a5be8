import type { INestApplication } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { DECORATORS, type OpenAPIObject, type SwaggerDocumentOptions, SwaggerModule } from '@nestjs/swagger';
import { KEY_EXPIRES_HEADER, REPLAYED_HEADER } from '../../idempotency.constants.js';
import { IdempotentRoutes } from '../idempotent-routes.js';
import { PATH_METADATA } from '../route-check/nest-route-metadata.js';
import { API_IDEMPOTENT, type ApiIdempotentOptions } from './api-idempotent.decorator.js';
import {
  KEY_EXPIRED_RESPONSE,
  KEY_EXPIRES_RESPONSE_HEADER,
  keyHeader,
  type KeyPolicy,
  PROBLEM_RESPONSES,
  problemResponse,
  REPLAYED_RESPONSE_HEADER,
  withModuleDescription,
} from './idempotency-openapi.js';

/** The extension that marks an `@Idempotent()` route's operations while the document is built. */
const MARK = 'x-nestjs-pg-idempotency';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'search', 'query'] as const;

/** Where `@HttpCode()` keeps a handler's status (Nest's HTTP_CODE_METADATA). */
const HTTP_CODE_METADATA = '__httpCode__';

/** What the mark carries: whether the key is required, the route's key policy, and the `@HttpCode()` of the handler, if any. */
interface Mark {
  required: boolean;
  policy: KeyPolicy;
  /** The request header that carries the key; none when the route reads it from the body or with a function. */
  header?: string;
  status?: number;
  /** Keyed answers carry `Idempotency-Key-Expires`. */
  expiryHeader: boolean;
  /** A tombstone is answered 410 (the route keeps tombstones, and its caller is not one name). */
  answersKeyExpired: boolean;
}

/**
 * `SwaggerModule.createDocument(app, config, options)`, with every `@Idempotent()` route
 * documented, no second decorator needed: the `Idempotency-Key` request header (required as the
 * route requires it, with the route's key format and how long its keys are kept), the module's 400, 409, 422 and 503 answers as `application/problem+json`
 * (a status the route documents itself keeps its schema and gains the module's description), and
 * the `Idempotent-Replayed` header on every success response. `@ApiIdempotent()` on a route
 * overrides what its `@Idempotent()` options say. Call it after the app is created (its module
 * graph is read), as `createDocument`.
 */
export function createIdempotentDocument(
  app: INestApplication,
  config: Omit<OpenAPIObject, 'paths'>,
  options?: SwaggerDocumentOptions,
): OpenAPIObject {
  const marked = markIdempotentRoutes(app);
  let document: OpenAPIObject;
  try {
    document = SwaggerModule.createDocument(app, config, options);
  } finally {
    for (const [handler, extensions] of marked) Reflect.defineMetadata(DECORATORS.API_EXTENSION, extensions, handler);
  }
  for (const path of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = (path as Record<string, Operation | undefined>)[method];
      const mark = operation?.[MARK] as Mark | undefined;
      if (!operation || !mark) continue;
      delete operation[MARK];
      documentOperation(operation, mark, mark.status ?? (method === 'post' ? 201 : 200));
    }
  }
  return document;
}

type Operation = {
  parameters?: Array<{ name?: string; in?: string; $ref?: string }>;
  responses?: Record<string, { description?: string; headers?: Record<string, unknown> }>;
  [extension: `x-${string}`]: unknown;
};

/**
 * Marks the handler of every `@Idempotent()` route with {@link MARK} (its extensions as they were
 * are returned, for putting back once the document is built).
 */
function markIdempotentRoutes(app: INestApplication): Map<Function, unknown> {
  const routes = app.get(IdempotentRoutes, { strict: false });
  const scanner = new MetadataScanner();
  const marked = new Map<Function, unknown>();
  for (const wrapper of app.get(DiscoveryService, { strict: false }).getControllers()) {
    const controller = wrapper.metatype as Function | undefined;
    if (!controller?.prototype) continue;
    for (const name of scanner.getAllMethodNames(controller.prototype)) {
      const handler = controller.prototype[name] as Function;
      if (marked.has(handler) || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const route = routes.of(controller, handler);
      if (!route) continue;
      const explicit: Required<ApiIdempotentOptions> | undefined =
        Reflect.getMetadata(API_IDEMPOTENT, handler) ?? Reflect.getMetadata(API_IDEMPOTENT, controller);
      const extensions = Reflect.getMetadata(DECORATORS.API_EXTENSION, handler);
      marked.set(handler, extensions);
      const mark: Mark = {
        required: explicit?.required ?? route.required,
        policy: { keyFormatText: route.keys.text, ttlMs: route.ttlMs, tombstoneMs: route.tombstoneMs },
        header: route.keySource.kind === 'header' ? route.keySource.name : undefined,
        status: Reflect.getMetadata(HTTP_CODE_METADATA, handler),
        expiryHeader: route.expiryHeader,
        answersKeyExpired: route.tombstoneMs !== undefined && !route.namedCaller,
      };
      Reflect.defineMetadata(DECORATORS.API_EXTENSION, { ...extensions, [MARK]: mark }, handler);
    }
  }
  return marked;
}

/** The key's request header among an operation's parameters, with the route's policy. */
function documentKeyHeader(
  parameters: NonNullable<Operation['parameters']>,
  name: string,
  required: boolean,
  policy: KeyPolicy,
): void {
  const index = parameters.findIndex(
    (parameter) => parameter.in === 'header' && parameter.name?.toLowerCase() === name.toLowerCase(),
  );
  const header = { in: 'header', ...keyHeader(required, policy, name) };
  // `@ApiIdempotent()` documents the header without the route's policy: the route's own replaces it.
  if (index < 0) parameters.push(header);
  else if ((parameters[index] as { description?: string }).description === keyHeader(required).description)
    parameters[index] = header;
}

/**
 * Adds what the module answers to one operation, keeping what the route documents; a route that
 * documents no success response gets its own (`status`), to carry the replay header.
 */
function documentOperation(operation: Operation, mark: Mark, status: number): void {
  const { required, policy, header: name } = mark;
  if (name !== undefined) documentKeyHeader((operation.parameters ??= []), name, required, policy);
  const responses = (operation.responses ??= {});
  for (const response of mark.answersKeyExpired ? [...PROBLEM_RESPONSES, KEY_EXPIRED_RESPONSE] : PROBLEM_RESPONSES) {
    const [status, description] = response;
    const documented = responses[status];
    responses[status] = documented
      ? withModuleDescription(documented, description)
      : (problemResponse(response) as never);
  }
  if (!Object.keys(responses).some((code) => /^2/.test(code))) responses[status] = { description: '' };
  for (const [code, response] of Object.entries(responses)) {
    if (/^2/.test(code) && !response.headers?.[REPLAYED_HEADER]) {
      response.headers = { ...response.headers, [REPLAYED_HEADER]: REPLAYED_RESPONSE_HEADER };
    }
    if (mark.expiryHeader && /^2|^410$/.test(code) && !response.headers?.[KEY_EXPIRES_HEADER]) {
      response.headers = { ...response.headers, [KEY_EXPIRES_HEADER]: KEY_EXPIRES_RESPONSE_HEADER };
    }
  }
}
