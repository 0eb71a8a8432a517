// One error family. Services throw these; the error plugin turns them into CONTRACT.md's body.
// Anything else that reaches the handler is a bug and answers 500 with its message hidden.

export interface ErrorDetail {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    public readonly statusCode: number,
    public readonly code: string,
    message: string,
    public readonly details?: ErrorDetail[],
    public readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends ApiError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(400, 'VALIDATION_FAILED', message, details);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(
    message = 'Authentication is required: send Authorization: Bearer <token or API key>.',
    code = 'UNAUTHORIZED',
  ) {
    super(401, code, message);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message: string, code = 'FORBIDDEN') {
    super(403, code, message);
  }
}

export class NotFoundError extends ApiError {
  constructor(what: string) {
    super(404, 'NOT_FOUND', `${what} was not found.`);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, code = 'CONFLICT') {
    super(409, code, message);
  }
}

export class UnprocessableError extends ApiError {
  constructor(message: string, code = 'UNPROCESSABLE') {
    super(422, code, message);
  }
}

export class TooManyRequestsError extends ApiError {
  constructor(message: string, retryAfterSeconds: number, code = 'RATE_LIMITED') {
    super(429, code, message, undefined, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(message: string, code = 'SERVICE_UNAVAILABLE') {
    super(503, code, message);
  }
}

export const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The message of anything thrown, for a log line or a stored reason (a thrown non-Error is stringified). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
