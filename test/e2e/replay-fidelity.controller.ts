import { Controller, Header, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { Exclude } from 'class-transformer';
import type { ServerResponse } from 'node:http';
import { IdempotencyTransaction, Idempotent } from '../../src/index.js';
import { type AuthenticatedRequest, BearerAuthGuard } from '../../src/demo/http/bearer-auth.guard.js';
import { writePayment } from '../support/common-routes.controller.js';
import { type HeaderSetter, type SelfSender, sendItself } from '../support/platform-response.js';

class Account {
  id!: number;
  name!: string;
  @Exclude() password!: string;

  constructor(fields: Account) {
    Object.assign(this, fields);
  }
}

/** Answers shaped in every way a client can receive them: headers, a 204, a serialized entity, a self-sent answer. */
@Controller('lab')
@UseGuards(BearerAuthGuard)
export class ReplayFidelityController {
  constructor(private readonly tx: IdempotencyTransaction) {}

  /** Passes its headers to `writeHead()` as a flat list, naming `Link` twice (as a platform may). */
  @Post('write-head-list')
  @Idempotent()
  writeHeadList(@Res({ passthrough: true }) response: { raw?: ServerResponse } & ServerResponse): void {
    const raw = response.raw ?? response;
    raw.writeHead(201, ['Content-Type', 'application/json', 'Link', '</lab/a>; rel="a"', 'Link', '</lab/b>; rel="b"']);
    raw.end('{"listed":true}');
  }

  @Post('no-content')
  @Idempotent()
  @HttpCode(204)
  noContent(): void {}

  /** Sends 200 itself and returns a value, which Nest then tries to send with the route's 201. */
  @Post('self-sent-and-returned')
  @Idempotent()
  async selfSentAndReturned(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: SelfSender,
  ): Promise<object> {
    const payment = await writePayment(this.tx, request);
    sendItself(response, 200, payment);
    return { ignored: 'a second answer, after the first was sent' };
  }

  /** A header with two values (`Link`, allow-listed by the replay suites). */
  @Post('links')
  @Idempotent()
  links(@Res({ passthrough: true }) response: { header(name: string, value: string | string[]): unknown }): object {
    response.header('Link', ['</lab/things/42>; rel="self"', '</lab/owners/7>; rel="owner"']);
    return { linked: true };
  }

  @Post('headers')
  @Idempotent()
  @Header('Location', '/lab/things/42')
  @Header('ETag', '"v1"')
  @Header('Cache-Control', 'no-store')
  headers(@Res({ passthrough: true }) response: HeaderSetter): object {
    response.header('X-Trace', 'set-by-the-first-run');
    response.header('X-Replayed-Too', 'configured');
    response.header('Set-Cookie', 'session=secret-of-the-first-caller; Path=/; HttpOnly');
    return { created: 42 };
  }

  @Post('serialized')
  @Idempotent()
  serialized(): Account {
    return new Account({ id: 7, name: 'Ada', password: 'never-leaves' });
  }
}
