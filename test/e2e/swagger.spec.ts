import { Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiProperty,
  DocumentBuilder,
  SwaggerModule,
} from '@nestjs/swagger';
import { Idempotent } from '../../src/index.js';
import { ApiIdempotent, createIdempotentDocument } from '../../src/http/openapi/index.js';
import { appsOn, HTTP_PLATFORMS, type RunningApp } from '../support/apps.js';

class ValidationErrors {
  @ApiProperty({ type: [String] })
  errors!: string[];
}

@Controller('documented')
class DocumentedController {
  @Post()
  @Idempotent()
  @ApiIdempotent()
  @ApiCreatedResponse({ description: 'the payment' })
  @ApiBadRequestResponse({ description: 'the body is invalid', type: ValidationErrors })
  create(): object {
    return {};
  }

  @Post('optional')
  @Idempotent({ required: false })
  @ApiIdempotent({ required: false })
  optional(): object {
    return {};
  }
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('@ApiIdempotent() in the OpenAPI document', () => {
    let lab: RunningApp;
    let paths: Record<string, any>;
    beforeAll(async () => {
      lab = await startLab({}, { controllers: [DocumentedController] });
      paths = SwaggerModule.createDocument(lab.app, new DocumentBuilder().build()).paths;
    });
    afterAll(() => lab.close());

    it('documents the Idempotency-Key header, required as the route requires it', () => {
      const header = (path: string) =>
        paths[path].post.parameters.find((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect(header('/documented')).toMatchObject({ required: true, schema: { type: 'string', maxLength: 255 } });
      expect(header('/documented/optional')).toMatchObject({ required: false });
    });

    it("documents 409 (with Retry-After) and 422 as problems, and keeps the route's own 201 and 400", () => {
      const responses = paths['/documented'].post.responses;
      expect(responses['409'].headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 1 });
      expect(responses['409'].content['application/problem+json'].schema.properties.type.enum).toEqual([
        'urn:nestjs-pg-idempotency:key-in-use',
      ]);
      expect(responses['422'].content['application/problem+json'].schema.properties.type.enum).toEqual([
        'urn:nestjs-pg-idempotency:key-reused',
      ]);
      expect(responses['201'].description).toBe('the payment');
      expect(responses['400'].description).toContain('the body is invalid');
      expect(responses['400'].description).toContain('Idempotency-Key header is missing or malformed');
      expect(responses['400'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/ValidationErrors',
      });
    });

    it("an undocumented 400 is documented as the module's problem", () => {
      const responses = paths['/documented/optional'].post.responses;
      expect(responses['400'].content['application/problem+json'].schema.properties.type.enum).toEqual([
        'urn:nestjs-pg-idempotency:key-missing',
        'urn:nestjs-pg-idempotency:key-malformed',
      ]);
    });
  });
});

@Controller('automatic')
class UndecoratedController {
  @Post()
  @Idempotent()
  @ApiBadRequestResponse({ description: 'the body is invalid', type: ValidationErrors })
  create(): object {
    return {};
  }

  @Post('optional')
  @HttpCode(200)
  @Idempotent({ required: false })
  optional(): object {
    return {};
  }

  /** `@ApiIdempotent()` overrides the route's options. */
  @Post('overridden')
  @Idempotent({ required: false })
  @ApiIdempotent({ required: true })
  overridden(): object {
    return {};
  }

  /** A route with its own key format and ttl: the document says both. */
  @Post('orders')
  @Idempotent({ keyFormat: /ord_[0-9a-z]{8,}/, ttl: '2h' })
  @ApiIdempotent()
  orders(): object {
    return {};
  }

  /** A webhook keyed on another header: the document names that header. */
  @Post('deliveries')
  @Idempotent({ keyFrom: { header: 'X-GitHub-Delivery' }, caller: 'github' })
  deliveries(): object {
    return {};
  }

  /** A webhook keyed on a body field: no key header to document (the body's schema is the app's). */
  @Post('events')
  @Idempotent({ keyFrom: { body: 'id' }, caller: 'stripe', keyFormat: 'printable-ascii' })
  events(): object {
    return {};
  }

  /** A route that keeps tombstones and tells its keys' expiry: the document says both. */
  @Post('settlements')
  @Idempotent({ ttl: '1d', tombstone: '30d', expiryHeader: true })
  settlements(): object {
    return {};
  }

  /** A provider's route keeping tombstones answers them 200: no 410 to document. */
  @Post('provider-events')
  @Idempotent({ keyFrom: { body: 'id' }, caller: 'stripe', keyFormat: 'printable-ascii', tombstone: '30d' })
  providerEvents(): object {
    return {};
  }

  @Post('plain')
  plain(): object {
    return {};
  }
}

describe.each(HTTP_PLATFORMS)('on %s', (platform) => {
  const { startLab } = appsOn(platform);

  describe('createIdempotentDocument()', () => {
    let lab: RunningApp;
    let paths: Record<string, any>;
    beforeAll(async () => {
      lab = await startLab({}, { controllers: [UndecoratedController] });
      paths = createIdempotentDocument(lab.app, new DocumentBuilder().build()).paths;
    });
    afterAll(() => lab.close());

    const keyHeaders = (path: string) =>
      (paths[path].post.parameters ?? []).filter((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');

    it('documents every @Idempotent() route with no second decorator, required as the route requires it', () => {
      expect(keyHeaders('/automatic')).toEqual([
        expect.objectContaining({ required: true, schema: { type: 'string', minLength: 1, maxLength: 255 } }),
      ]);
      expect(keyHeaders('/automatic/optional')).toEqual([expect.objectContaining({ required: false })]);
      expect(keyHeaders('/automatic/plain')).toEqual([]);
      expect(paths['/automatic/plain'].post.responses['201'].headers).toBeUndefined();
    });

    it('documents the header a route reads its key from (keyFrom), and none for a key in the body', () => {
      const headers = (path: string) =>
        (paths[path].post.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => p.name);
      expect(headers('/automatic/deliveries')).toEqual(['X-GitHub-Delivery']);
      expect(headers('/automatic/events')).toEqual([]);
      expect(Object.keys(paths['/automatic/events'].post.responses).sort()).toEqual([
        '201',
        '400',
        '409',
        '422',
        '503',
      ]);
    });

    it("lets @ApiIdempotent() override the route's options, documenting the header once", () => {
      expect(keyHeaders('/automatic/overridden')).toEqual([expect.objectContaining({ required: true })]);
    });

    it("publishes each route's key format and how long its keys are kept, @ApiIdempotent() or not", () => {
      const [byDefault] = keyHeaders('/automatic');
      expect(byDefault.description).toContain('(a UUID or a ULID)');
      expect(byDefault.description).toContain('A key is kept for 1 day after its request');
      const [orders] = keyHeaders('/automatic/orders');
      expect(orders.description).toContain('(printable ASCII characters matching /ord_[0-9a-z]{8,}/)');
      expect(orders.description).toContain('A key is kept for 2 hours after its request');
      expect(orders.description).not.toContain('UUID');
    });

    it("adds 400, 409, 422 and 503 as problems (a route's own 400 keeps its schema) and Idempotent-Replayed on the success response, 200 or 201", () => {
      const responses = paths['/automatic'].post.responses;
      expect(Object.keys(responses).sort()).toEqual(['201', '400', '409', '422', '503']);
      expect(responses['400'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/ValidationErrors',
      });
      expect(responses['400'].description).toContain('the body is invalid');
      expect(responses['400'].description).toContain('Idempotency-Key header is missing or malformed');
      expect(responses['503'].headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 1 });
      expect(responses['201'].headers['Idempotent-Replayed']).toBeDefined();
      expect(paths['/automatic/optional'].post.responses['200'].headers['Idempotent-Replayed']).toBeDefined();
    });

    it('documents a tombstone: how long the key is kept without its answer, the 410 with its members, and Idempotency-Key-Expires on the answers that carry it', () => {
      const [header] = keyHeaders('/automatic/settlements');
      expect(header.description).toContain(
        'A key is kept for 1 day after its request with its answer, then without it until 30 days after its request',
      );
      const responses = paths['/automatic/settlements'].post.responses;
      expect(Object.keys(responses).sort()).toEqual(['201', '400', '409', '410', '422', '503']);
      const gone = responses['410'].content['application/problem+json'].schema;
      expect(gone.properties.type.enum).toEqual(['urn:nestjs-pg-idempotency:key-expired']);
      expect(gone.properties.recordedStatus).toEqual({ type: 'integer' });
      expect(gone.properties.keyExpiresAt).toEqual({ type: 'string', format: 'date-time' });
      expect(responses['201'].headers['Idempotency-Key-Expires'].schema).toEqual({ type: 'string' });
      expect(responses['410'].headers['Idempotency-Key-Expires']).toBeDefined();
      expect(paths['/automatic'].post.responses['201'].headers['Idempotency-Key-Expires']).toBeUndefined();
      expect(Object.keys(paths['/automatic/provider-events'].post.responses)).not.toContain('410');
    });

    it('gives the same document when called again, and leaves SwaggerModule.createDocument() as it was', () => {
      expect(createIdempotentDocument(lab.app, new DocumentBuilder().build()).paths).toEqual(paths);
      const plain: Record<string, any> = SwaggerModule.createDocument(lab.app, new DocumentBuilder().build()).paths;
      expect(plain['/automatic'].post.parameters ?? []).toEqual([]);
      expect(plain['/automatic'].post['x-nestjs-pg-idempotency']).toBeUndefined();
    });
  });
});
