/**
 * The HTTP statuses of the service's error answers, every one a google.rpc.Status body
 * (`#/components/responses/<name>` in the document). Statuses follow the gRPC-gateway
 * mapping of the code, except 412 and 413 where HTTP has a more precise word. 429 is said
 * only by the operations that spend a budget or have a bound of their own
 * (docs/operations.md, "Budgets"): {@link BUDGETED_ERRORS}.
 */
export const ERROR_RESPONSES: Readonly<Record<number, { name: string; description: string }>> = {
  400: {
    name: 'BadRequest',
    description:
      'INVALID_ARGUMENT (3): BadRequest names every wrong field or parameter. Or ' +
      'FAILED_PRECONDITION (9): e.g. deleting a group that still has children ' +
      '(PreconditionFailure RESOURCE_NOT_EMPTY), or writing what a Kubernetes object manages.',
  },
  401: { name: 'Unauthenticated', description: 'UNAUTHENTICATED (16): no valid credential.' },
  403: {
    name: 'PermissionDenied',
    description: 'PERMISSION_DENIED (7): visible to the caller, but not theirs to do.',
  },
  404: {
    name: 'NotFound',
    description: 'NOT_FOUND (5): missing, or invisible to the caller (ResourceInfo).',
  },
  409: {
    name: 'Conflict',
    description: 'ALREADY_EXISTS (6), or ABORTED (10): a concurrent update; try again.',
  },
  412: {
    name: 'PreconditionFailed',
    description: 'FAILED_PRECONDITION (9): If-Match names another version (ETAG).',
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'INVALID_ARGUMENT (3): the body is larger than the server accepts.',
  },
  429: {
    name: 'ResourceExhausted',
    description:
      'RESOURCE_EXHAUSTED (8): a spent budget (QuotaFailure names it, RetryInfo and ' +
      '`Retry-After` say when to come back), or a bound of the request itself.',
  },
  500: {
    name: 'Internal',
    description: 'INTERNAL (13): a fault, logged with the request id; nothing of it is shown.',
  },
  503: {
    name: 'Unavailable',
    description: 'UNAVAILABLE (14): the database does not answer (or the server is starting).',
  },
};

/** What every authenticated operation may answer. */
export const API_ERRORS = [400, 401, 403, 404, 500, 503] as const;
/** …and a create, which has a body and a unique name. */
export const CREATE_ERRORS = [...API_ERRORS, 409, 413] as const;
/** …and an update, which may also be conditional (If-Match). */
export const UPDATE_ERRORS = [...API_ERRORS, 409, 412, 413] as const;
/** …and a delete, which may be conditional. */
export const DELETE_ERRORS = [...API_ERRORS, 409, 412] as const;
/**
 * The operations that spend a budget (src/budgets.ts: simulate, who-can, what-can, batch
 * check, access request create, audit list, the STS and the registry's token server) or
 * answer RESOURCE_EXHAUSTED for a bound of their own: the document adds 429 to theirs.
 * `openapi.test.ts` checks every one is an operation of the document.
 */
export const BUDGETED_OPERATIONS: ReadonlySet<string> = new Set([
  'iam.access.simulate',
  'iam.access.whoCan',
  'iam.access.whatCan',
  'iam.access.batchCheck',
  'iam.accessRequests.create',
  'audit.events.list',
  'sts.exchange',
  'sts.exchangeForm',
  'registry.auth.token',
]);
