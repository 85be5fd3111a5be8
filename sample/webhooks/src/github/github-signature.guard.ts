import {
  BadRequestException,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  type RawBodyRequest,
} from '@nestjs/common';
import { Webhooks } from '@octokit/webhooks';
import type { Request } from 'express';

/**
 * Checks the X-Hub-Signature-256 header on the raw body with @octokit/webhooks, before the key is
 * reserved: a forged delivery is refused (400) and nothing is kept.
 */
@Injectable()
export class GitHubSignatureGuard implements CanActivate {
  private readonly github: Webhooks;

  constructor() {
    const secret = process.env.GITHUB_WEBHOOK_SECRET;
    if (!secret) throw new Error('set GITHUB_WEBHOOK_SECRET (the webhook secret)');
    this.github = new Webhooks({ secret });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<RawBodyRequest<Request>>();
    const signature = request.headers['x-hub-signature-256'];
    const payload = request.rawBody?.toString('utf8') ?? '';
    if (typeof signature !== 'string' || !(await this.github.verify(payload, signature)))
      throw new BadRequestException('invalid GitHub signature');
    return true;
  }
}
