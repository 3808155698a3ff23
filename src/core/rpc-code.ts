/**
 * google.rpc status codes and the gRPC-gateway HTTP mapping that docs/api.md (Errors) fixes.
 * The one table both front doors read: the API renders a code as a status, the
 * reconciler decides from it whether a failure is worth a retry.
 */
export const Code = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type CodeName = keyof typeof Code;
export type CodeNumber = (typeof Code)[CodeName];

const names = new Map<number, CodeName>(
  Object.entries(Code).map(([name, n]) => [n, name as CodeName]),
);

/** The canonical name of a code, e.g. `INVALID_ARGUMENT`; used as ErrorInfo.reason. */
export function codeName(code: CodeNumber): CodeName {
  return names.get(code) ?? 'UNKNOWN';
}

const httpStatus: Record<number, number> = {
  0: 200,
  1: 499,
  2: 500,
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 400,
  10: 409,
  11: 400,
  12: 501,
  13: 500,
  14: 503,
  15: 500,
  16: 401,
};

/** HTTP status for a code, as grpc-gateway's runtime.HTTPStatusFromCode maps it. */
export function httpStatusOf(code: CodeNumber): number {
  return httpStatus[code] ?? 500;
}

/** Whether a failure with this code may succeed if simply tried again later. */
export function isRetryable(code: CodeNumber): boolean {
  return (
    code === Code.UNAVAILABLE ||
    code === Code.INTERNAL ||
    code === Code.DEADLINE_EXCEEDED ||
    code === Code.ABORTED ||
    code === Code.RESOURCE_EXHAUSTED ||
    code === Code.UNKNOWN
  );
}
