import { Body, Controller, Get, Post } from '@nestjs/common';

/** Routes without @Idempotent(), in an app that registers IdempotencyInterceptor globally. */
@Controller('plain')
export class PlainController {
  @Get()
  list(): object {
    return { items: [] };
  }

  @Post()
  echo(@Body() body: object): object {
    return body;
  }
}
