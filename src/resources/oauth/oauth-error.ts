/** The error codes the token, introspection and revocation endpoints answer with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unsupported_token_type'
  | 'temporarily_unavailable'
  | 'server_error';

/** RFC 6749 §5.2 (and RFC 8707, RFC 7009): each code's HTTP status. */
const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 403,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  unsupported_token_type: 400,
  temporarily_unavailable: 503,
  server_error: 500,
};

/**
 * An OAuth 2.0 error answer (`{error, error_description}`), which the OAuth endpoints
 * speak instead of google.rpc.Status: their clients are OAuth libraries.
 */
export class OAuthError extends Error {
  readonly status: number;

  /** `status`: only to answer a code with another status than its own (429 when busy). */
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    status?: number,
  ) {
    super(`${error}: ${description}`);
    this.status = status ?? STATUS[error];
  }
}
