import { Code, codeName, type CodeNumber } from './rpc-code.js';

/** The error domain carried in every ErrorInfo detail. */
export const ERROR_DOMAIN = 'iam.arbor.dev';

const TYPE_PREFIX = 'type.googleapis.com/google.rpc.';

export interface FieldViolation {
  field: string;
  description: string;
}

export interface PreconditionViolation {
  type: string;
  subject?: string;
  description: string;
}

export type ErrorDetail =
  | {
      '@type': `${typeof TYPE_PREFIX}ErrorInfo`;
      reason: string;
      domain: string;
      metadata?: Record<string, string>;
    }
  | { '@type': `${typeof TYPE_PREFIX}BadRequest`; fieldViolations: FieldViolation[] }
  | { '@type': `${typeof TYPE_PREFIX}PreconditionFailure`; violations: PreconditionViolation[] }
  | {
      '@type': `${typeof TYPE_PREFIX}ResourceInfo`;
      resourceType: string;
      resourceName: string;
      description?: string;
    }
  /** When to try again: `retryDelay` is a google.protobuf.Duration in its JSON form (`"12s"`). */
  | { '@type': `${typeof TYPE_PREFIX}RetryInfo`; retryDelay: string }
  | { '@type': `${typeof TYPE_PREFIX}QuotaFailure`; violations: QuotaViolation[] };

/** One quota a request ran past: `subject` names whose quota (never a secret). */
export interface QuotaViolation {
  subject: string;
  description: string;
}

/** The wire shape of a google.rpc.Status. */
export interface RpcStatus {
  code: CodeNumber;
  message: string;
  details: ErrorDetail[];
}

/**
 * The one error type of the service layer. Anything else that escapes a service is a
 * fault and is rendered as INTERNAL with nothing of it shown to the client.
 */
export class RpcError extends Error {
  readonly code: CodeNumber;
  readonly details: ErrorDetail[];
  /** Set only where HTTP has a more precise status than the code's mapping (405, 413). */
  readonly httpStatus: number | undefined;

  constructor(code: CodeNumber, message: string, details: ErrorDetail[] = [], httpStatus?: number) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.httpStatus = httpStatus;
    const hasInfo = details.some((d) => d['@type'] === `${TYPE_PREFIX}ErrorInfo`);
    this.details = hasInfo ? details : [errorInfo(code), ...details];
  }

  toStatus(): RpcStatus {
    return { code: this.code, message: this.message, details: this.details };
  }
}

function errorInfo(code: CodeNumber): ErrorDetail {
  return { '@type': `${TYPE_PREFIX}ErrorInfo`, reason: codeName(code), domain: ERROR_DOMAIN };
}

export function isRpcError(e: unknown): e is RpcError {
  return e instanceof RpcError;
}

/** INVALID_ARGUMENT with a BadRequest naming every failed field: `Invalid argument: <field>: <why>`. */
export function invalidArgument(violations: FieldViolation[]): RpcError {
  const message =
    'Invalid argument: ' + violations.map((v) => `${v.field}: ${v.description}`).join('; ');
  return new RpcError(Code.INVALID_ARGUMENT, message, [
    { '@type': `${TYPE_PREFIX}BadRequest`, fieldViolations: violations },
  ]);
}

/** Shorthand for a single-field INVALID_ARGUMENT. */
export function invalidField(field: string, description: string): RpcError {
  return invalidArgument([{ field, description }]);
}

/** FAILED_PRECONDITION: `Precondition failed: <why>` with one PreconditionFailure violation. */
export function failedPrecondition(type: string, description: string, subject?: string): RpcError {
  return new RpcError(Code.FAILED_PRECONDITION, `Precondition failed: ${description}`, [
    {
      '@type': `${TYPE_PREFIX}PreconditionFailure`,
      violations: [{ type, description, ...(subject === undefined ? {} : { subject }) }],
    },
  ]);
}

/** NOT_FOUND with a ResourceInfo naming what was looked for. */
export function notFound(resourceType: string, resourceName: string): RpcError {
  return new RpcError(Code.NOT_FOUND, `Not found: ${resourceType} ${resourceName}`, [
    { '@type': `${TYPE_PREFIX}ResourceInfo`, resourceType, resourceName, description: 'not found' },
  ]);
}

export function alreadyExists(resourceType: string, description: string): RpcError {
  return new RpcError(Code.ALREADY_EXISTS, `Already exists: ${description}`, [
    { '@type': `${TYPE_PREFIX}ResourceInfo`, resourceType, resourceName: '', description },
  ]);
}

export function permissionDenied(description = 'the caller may not do this'): RpcError {
  return new RpcError(Code.PERMISSION_DENIED, `Permission denied: ${description}`);
}

export function unauthenticated(description = 'a valid bearer token is required'): RpcError {
  return new RpcError(Code.UNAUTHENTICATED, `Unauthenticated: ${description}`);
}

export function unavailable(description = 'the service is temporarily unavailable'): RpcError {
  return new RpcError(Code.UNAVAILABLE, `Unavailable: ${description}`);
}

/** RESOURCE_EXHAUSTED: a configured bound (a quota) is reached. */
export function resourceExhausted(description: string): RpcError {
  return new RpcError(Code.RESOURCE_EXHAUSTED, `Resource exhausted: ${description}`);
}

/**
 * RESOURCE_EXHAUSTED for a spent budget: a QuotaFailure naming it and a RetryInfo saying
 * when its window ends (whole seconds, at least one), from which REST sets `Retry-After`.
 */
export function budgetExhausted(violation: QuotaViolation, retryAfterSeconds: number): RpcError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new RpcError(Code.RESOURCE_EXHAUSTED, `Resource exhausted: ${violation.description}`, [
    { '@type': `${TYPE_PREFIX}QuotaFailure`, violations: [violation] },
    { '@type': `${TYPE_PREFIX}RetryInfo`, retryDelay: `${seconds}s` },
  ]);
}

/** The whole seconds a status's RetryInfo asks the client to wait, if it carries one. */
export function retryAfterOf(status: RpcStatus): number | undefined {
  for (const d of status.details)
    if (d['@type'] === `${TYPE_PREFIX}RetryInfo`) return Math.ceil(parseFloat(d.retryDelay));
  return undefined;
}

export function internal(): RpcError {
  return new RpcError(Code.INTERNAL, 'Internal error');
}

/** Where a door reports failures (a pino logger will do). */
export interface FaultLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * What any failure leaves a door as, the same for every door: an RpcError as it is (its
 * cause, a dependency's failure, reported), anything else a fault, reported and answered
 * as INTERNAL with nothing of it shown. `log` is asked for only when there is something
 * to report.
 */
export function asRpcError(e: unknown, log: () => FaultLog): RpcError {
  if (isRpcError(e)) {
    const cause = (e as { cause?: unknown }).cause;
    if (cause) log().warn({ err: cause }, 'dependency failure');
    return e;
  }
  log().error({ err: e }, 'unhandled error');
  return internal();
}
