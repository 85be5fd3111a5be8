import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';

export interface AuthenticatedRequest {
  user: { id: string };
}

/** The demo's stand-in for real authentication: the bearer token is the caller id. */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const match = /^Bearer ([\x21-\x7e]{1,200})$/.exec(request.headers.authorization ?? '');
    if (!match) throw new UnauthorizedException('send Authorization: Bearer <token>; the token names the caller');
    request.user = { id: match[1] };
    return true;
  }
}
