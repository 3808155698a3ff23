/**
 * The CLI's exit codes, stable and documented (README "The CLI", docs/cli.md): scripts may
 * branch on them. A refusal of the API maps by its google.rpc code.
 */
export const EXIT = {
  OK: 0,
  /** Anything not below: a server fault, an unexpected answer. */
  FAILURE: 1,
  /** The command line itself is wrong (commander's usage errors). */
  USAGE: 2,
  /** INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE: the request was refused as given. */
  INVALID: 3,
  /** NOT_FOUND (or not visible to you). */
  NOT_FOUND: 4,
  /** ALREADY_EXISTS, ABORTED. */
  CONFLICT: 5,
  /** UNAUTHENTICATED, PERMISSION_DENIED, or no credentials at all. */
  DENIED: 6,
  /** The API cannot be reached, or UNAVAILABLE / RESOURCE_EXHAUSTED. */
  UNAVAILABLE: 7,
} as const;

const BY_CODE: Record<number, number> = {
  3: EXIT.INVALID,
  9: EXIT.INVALID,
  11: EXIT.INVALID,
  5: EXIT.NOT_FOUND,
  6: EXIT.CONFLICT,
  10: EXIT.CONFLICT,
  7: EXIT.DENIED,
  16: EXIT.DENIED,
  8: EXIT.UNAVAILABLE,
  14: EXIT.UNAVAILABLE,
};

/** A failure the CLI reports in words (no stack) and turns into its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.FAILURE,
    /** Lines printed under the message: field violations, hints. */
    readonly details: readonly string[] = [],
  ) {
    super(message);
  }
}

interface StatusLike {
  code?: unknown;
  message?: unknown;
  details?: Array<{
    '@type'?: string;
    fieldViolations?: Array<{ field?: string; description?: string }>;
    violations?: Array<{ subject?: string; description?: string }>;
  }>;
}

/** A refused call as the server said it: the google.rpc message and its field violations. */
export function rpcFailure(error: unknown, httpStatus: number): CliError {
  const s = (typeof error === 'object' && error !== null ? error : {}) as StatusLike;
  const code = typeof s.code === 'number' ? s.code : undefined;
  const message =
    typeof s.message === 'string' && s.message !== ''
      ? s.message
      : `the API answered HTTP ${httpStatus} without a google.rpc.Status`;
  const lines: string[] = [];
  for (const d of s.details ?? []) {
    for (const v of d.fieldViolations ?? [])
      lines.push(`  ${v.field ?? '?'}: ${v.description ?? ''}`);
    for (const v of d.violations ?? []) lines.push(`  ${v.subject ?? '?'}: ${v.description ?? ''}`);
  }
  // A violation the message already states is not said twice.
  const extra = lines.filter((l) => !message.includes(l.trim()));
  return new CliError(message, (code !== undefined && BY_CODE[code]) || EXIT.FAILURE, extra);
}

/** The API could not be reached at all (refused, DNS, TLS). */
export function unreachable(api: string, e: unknown): CliError {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
  return new CliError(`cannot reach the Arbor API at ${api}: ${why}`, EXIT.UNAVAILABLE, [
    '  is the server running? set the address with --api or ARBOR_API_URL',
  ]);
}

/** What runCli prints for a CliError, and the code it exits with. */
export function reportCliError(e: CliError): number {
  process.stderr.write(`arbor: ${e.message}\n${e.details.map((l) => `${l}\n`).join('')}`);
  return e.exitCode;
}
