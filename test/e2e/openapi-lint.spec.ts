import { Controller, Patch, Post } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Document, Spectral } from '@stoplight/spectral-core';
import { schema, truthy } from '@stoplight/spectral-functions';
import { Json } from '@stoplight/spectral-parsers';
import { Idempotent } from '../../src/index.js';
import { ApiIdempotent } from '../../src/http/openapi/index.js';
import { appsOn, PLATFORMS_AND_DEMO_HOSTS, type RunningApp, startLab } from '../support/apps.js';
import { send } from '../support/http.js';

/** The Spectral ruleset of the idempotency-key implementation seed, as it is written there. */
const SEED_RULESET = {
  rules: {
    'idempotency-header-required': {
      message: 'POST and PATCH operations must require an Idempotency-Key header',
      severity: 'error' as const,
      given: '$.paths[*][post,patch]',
      then: {
        function: schema,
        field: 'parameters',
        functionOptions: {
          schema: {
            type: 'array',
            contains: {
              type: 'object',
              properties: { name: { const: 'Idempotency-Key' }, required: { const: true } },
              required: ['name', 'required'],
            },
          },
        },
      },
    },
    'idempotency-replay-header-documented': {
      message: 'POST 200 response should document X-Idempotency-Replayed header',
      severity: 'warn' as const,
      given: '$.paths[*].post.responses.200.headers',
      then: { function: truthy, field: 'X-Idempotency-Replayed' },
    },
  },
};

/**
 * The seed's rules, and the second one as it reads for this module's replay header
 * (`Idempotent-Replayed`) on every success response of a POST or PATCH: the seed names another
 * header, on a 200 the demo's POSTs never answer (they answer 201).
 */
const MODULE_RULESET = {
  rules: {
    ...SEED_RULESET.rules,
    'idempotent-replayed-header-documented': {
      message: 'A success response of a POST or PATCH must document the Idempotent-Replayed header',
      severity: 'warn' as const,
      given: '$.paths[*][post,patch].responses[?(@property.match(/^2/))]',
      then: { function: truthy, field: 'headers.Idempotent-Replayed' },
    },
  },
};

@Controller('linted')
class LintedController {
  @Post()
  @Idempotent()
  @ApiIdempotent()
  create(): object {
    return {};
  }

  @Patch(':id')
  @Idempotent()
  @ApiIdempotent()
  update(): object {
    return {};
  }
}

async function lint(
  document: object,
  ruleset: object = SEED_RULESET,
): Promise<Array<{ code: string | number; severity: number; path: (string | number)[] }>> {
  const spectral = new Spectral();
  spectral.setRuleset(ruleset as never);
  return spectral.run(new Document(JSON.stringify(document), Json));
}

describe("the OpenAPI document @ApiIdempotent() produces, linted with the seed's Spectral rules", () => {
  let lab: RunningApp;
  let document: { paths: Record<string, unknown> } & Record<string, unknown>;
  beforeAll(async () => {
    lab = await startLab({}, { controllers: [LintedController] });
    document = SwaggerModule.createDocument(lab.app, new DocumentBuilder().setTitle('linted').build()) as never;
  });
  afterAll(() => lab.close());

  it('passes: every POST and PATCH documented with @ApiIdempotent() requires the Idempotency-Key header', async () => {
    const paths = Object.fromEntries(Object.entries(document.paths).filter(([path]) => path.startsWith('/linted')));
    expect(Object.keys(paths).sort()).toEqual(['/linted', '/linted/{id}']);
    const results = await lint({ ...document, paths });
    expect(results.filter((result) => result.severity === 0)).toEqual([]);
  });

  it('fails for routes without @ApiIdempotent() (the rule does bite)', async () => {
    const results = await lint(document);
    const errors = results.filter((result) => result.code === 'idempotency-header-required' && result.severity === 0);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((error) => !String(error.path[1]).startsWith('/linted'))).toBe(true);
  });
});

describe.each(PLATFORMS_AND_DEMO_HOSTS)(
  "the demo's OpenAPI document (GET /openapi.json, createIdempotentDocument), on %s with %s",
  (platform, host) => {
    const { startDemo } = appsOn(platform, host);
    let demo: RunningApp;
    let document: any;
    beforeAll(async () => {
      demo = await startDemo();
      const answer = await send(`${demo.url}/openapi.json`, { method: 'GET' });
      expect(answer.status).toBe(200);
      document = answer.json;
    });
    afterAll(() => demo.close());

    it("passes the seed's Spectral rules and the replay-header rule with no error and no warning, with no second decorator on a route", async () => {
      expect(Object.keys(document.paths).sort()).toEqual(['/payments', '/payments/{paymentId}/refunds']);
      expect(await lint(document, MODULE_RULESET)).toEqual([]);
    });

    it("documents the key header, the module's problems and the replay header on both idempotent routes, and nothing on the GETs", () => {
      for (const path of ['/payments', '/payments/{paymentId}/refunds']) {
        const operation = document.paths[path].post;
        expect(operation.parameters).toContainEqual(
          expect.objectContaining({ in: 'header', name: 'Idempotency-Key', required: true }),
        );
        expect(Object.keys(operation.responses).sort()).toEqual(['201', '400', '409', '422', '503']);
        expect(operation.responses['201'].headers['Idempotent-Replayed'].schema).toEqual({
          type: 'string',
          enum: ['true'],
        });
        expect(operation.responses['503'].content['application/problem+json'].schema.properties.type.enum).toEqual([
          'urn:nestjs-pg-idempotency:store-unavailable',
          'urn:nestjs-pg-idempotency:outcome-unreadable',
        ]);
        expect(operation['x-nestjs-pg-idempotency']).toBeUndefined();
        expect(document.paths[path].get.parameters ?? []).not.toContainEqual(
          expect.objectContaining({ name: 'Idempotency-Key' }),
        );
      }
    });
  },
);
