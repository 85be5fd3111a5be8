import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';

/**
 * Stands in for your authentication: takes the bearer token as the caller's id. A real guard
 * verifies the token (a JWT, a session) and sets `request.user` from it; the module reads
 * `request.user.id` as the key's caller.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; user?: object }>();
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!token) throw new UnauthorizedException('send Authorization: Bearer <your id>');
    request.user = { id: token };
    return true;
  }
}
