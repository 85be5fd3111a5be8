import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  type HttpServer,
  Logger,
} from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { IdempotencyProblem, PROBLEM_CONTENT_TYPE } from '../../http/problems/problems.js';

/**
 * Answers every error of the demo as RFC 9457 `application/problem+json`: the module's own
 * problems as they are, other HTTP errors (validation, 401, bad JSON, 413) with their status,
 * whether Nest or the platform's body parser raised them, anything else as a 500 that reveals
 * nothing. It answers through the app's HTTP adapter, so it
 * works the same on Express and Fastify.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Demo');

  constructor(private readonly http: HttpServer) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse();
    const problem = this.toProblem(exception);
    this.http.setHeader(response, 'Content-Type', PROBLEM_CONTENT_TYPE);
    this.http.reply(response, JSON.stringify(problem), problem.status);
  }

  private toProblem(exception: unknown): { status: number; [field: string]: unknown } {
    if (exception instanceof IdempotencyProblem) return { ...exception.problem };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const body = exception.getResponse();
      const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : body;
      const errors = Array.isArray(message) ? message : undefined;
      return {
        type: 'about:blank',
        title: STATUS_CODES[status] ?? 'Error',
        status,
        detail: errors ? 'the request body is invalid' : String(message ?? exception.message),
        ...(errors && { errors }),
      };
    }
    const clientError = clientErrorStatus(exception);
    if (clientError) {
      const title = STATUS_CODES[clientError] ?? 'Error';
      return { type: 'about:blank', title, status: clientError, detail: (exception as Error).message || title };
    }
    this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    return {
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      detail: 'the server failed; retry later',
    };
  }
}

/**
 * The 4xx status of an error the HTTP layer raised before Nest wrapped it, or undefined: NestJS 11
 * passes body-parser's and raw-body's errors through (`http-errors`, marked `expose`, e.g. 413 for
 * a body over the limit), and Fastify's own carry a `FST_` code and a `statusCode`. Other errors
 * with a 4xx `status` (an HTTP client's error for an upstream's 401, say) stay 500s: they are the
 * server's failure, not the request's, and must not be recorded as a deterministic answer.
 */
function clientErrorStatus(exception: unknown): number | undefined {
  if (!(exception instanceof Error)) return undefined;
  const { status, statusCode, expose, code } = exception as {
    status?: unknown;
    statusCode?: unknown;
    expose?: unknown;
    code?: unknown;
  };
  const raisedByHttpLayer = expose === true || (typeof code === 'string' && code.startsWith('FST_'));
  const value = typeof status === 'number' ? status : statusCode;
  return raisedByHttpLayer && typeof value === 'number' && value >= 400 && value < 500 ? value : undefined;
}
