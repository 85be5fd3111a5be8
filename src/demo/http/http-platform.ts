import type { AbstractHttpAdapter } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

/** The HTTP platforms the demo (and the test suites) run on. */
export type HttpPlatform = 'express' | 'fastify';

export const HTTP_PLATFORMS: readonly HttpPlatform[] = ['express', 'fastify'];

/** A fresh Nest HTTP adapter for `platform`. */
export function httpAdapterFor(platform: HttpPlatform): AbstractHttpAdapter {
  return platform === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
}

export function isHttpPlatform(value: string): value is HttpPlatform {
  return (HTTP_PLATFORMS as readonly string[]).includes(value);
}
