import { Controller, Patch, Post } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Document, Spectral } from '@stoplight/spectral-core';
import { schema, truthy } from '@stoplight/spectral-functions';
import { Json } from '@stoplight/spectral-parsers';
import { Idempotent } from '../../src/index.js';
import { ApiIdempotent } from '../../src/swagger/index.js';
import { type RunningApp, startLab } from '../support/apps.js';

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

async function lint(document: object): Promise<Array<{ code: string | number; severity: number; path: (string | number)[] }>> {
  const spectral = new Spectral();
  spectral.setRuleset(SEED_RULESET);
  return spectral.run(new Document(JSON.stringify(document), Json));
}

describe('the OpenAPI document @ApiIdempotent() produces, linted with the seed\'s Spectral rules', () => {
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
