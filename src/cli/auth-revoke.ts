import { openSession } from './api-session.js';
import { CliError, EXIT, unreachable } from './cli-errors.js';

/**
 * `arbor auth revoke [token]`: revoke an API token at the server's revocation endpoint
 * (RFC 7009, docs/oauth.md), authenticated with the session's own token. Without `token`
 * the session's token is revoked (its holder may always do that), and so is every token
 * exchanged from it. The credentials kept by `arbor auth login` are not forgotten: run
 * `arbor auth logout` for that.
 * @throws CliError (exit 6) when the server refuses the caller, exit 7 when unreachable.
 */
export async function authRevokeCommand(
  token: string | undefined,
  o: { api?: string },
): Promise<number> {
  const s = await openSession(o.api);
  // The static admin token is configuration, not an API token: only its operator retires it.
  if (token === undefined && s.source === 'ARBOR_ADMIN_TOKEN')
    throw new CliError(
      'the ARBOR_ADMIN_TOKEN is not an API token and cannot be revoked',
      EXIT.INVALID,
      ['  change ARBOR_ADMIN_TOKEN on the server to retire it'],
    );
  const revoked = token ?? s.token;
  let res: Response;
  try {
    ({ response: res } = await s.client.POST('/oauth2/revoke', {
      body: { token: revoked },
      bodySerializer: (b) => new URLSearchParams(b as Record<string, string>).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }));
  } catch (e) {
    throw unreachable(s.api, e);
  }
  if (res.ok) {
    process.stdout.write(
      `revoked ${revoked === s.token ? `the ${s.source} token` : 'the token'}\n`,
    );
    return EXIT.OK;
  }
  const body = (await res.json().catch(() => ({}))) as { error_description?: unknown };
  const why = typeof body.error_description === 'string' ? body.error_description : res.statusText;
  throw new CliError(
    `the server refused the revocation: ${why}`,
    res.status === 401 || res.status === 403 ? EXIT.DENIED : EXIT.INVALID,
  );
}
