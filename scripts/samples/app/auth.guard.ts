// A sample app's authentication: `Authorization: Bearer <user id>` sets request.user.id.
import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';

@Injectable()
export class AuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; user?: { id: string } }>();
    const user = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!user) throw new UnauthorizedException();
    request.user = { id: user };
    return true;
  }
}
