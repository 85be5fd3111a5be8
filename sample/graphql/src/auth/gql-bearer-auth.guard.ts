import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { Request } from 'express';

/**
 * Stands in for your authentication, for GraphQL: a guard's context is GraphQL's, so the HTTP
 * request is the GraphQL context's `req` (GqlExecutionContext), not `switchToHttp()`. It takes the
 * bearer token as the caller's id and sets `req.user`, where the module reads the key's caller
 * (`req.user.id`). A request without a token passes, unauthenticated: a keyed mutation is then
 * refused UNAUTHENTICATED by the module, and queries stay public.
 */
@Injectable()
export class GqlBearerAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = GqlExecutionContext.create(context).getContext<{ req: Request & { user?: object } }>().req;
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (token) request.user = { id: token };
    return true;
  }
}
