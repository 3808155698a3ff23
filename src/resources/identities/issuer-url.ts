/** Longest issuer URL accepted, in an identity or in a token. */
export const MAX_ISSUER_LENGTH = 2048;

/**
 * Why `issuer` is unacceptable as an OIDC issuer, or undefined. Issuers are https URLs
 * without credentials, query or fragment; http only when insecure issuers are allowed.
 * Applied to identities at create and to every token's `iss` before it is used at all.
 */
export function issuerProblem(issuer: string, allowInsecure: boolean): string | undefined {
  if (issuer.length > MAX_ISSUER_LENGTH) return `must be at most ${MAX_ISSUER_LENGTH} characters`;
  const want = allowInsecure ? 'must be an http or https URL' : 'must be an https URL';
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return want;
  }
  const okScheme = url.protocol === 'https:' || (allowInsecure && url.protocol === 'http:');
  if (!okScheme || url.hostname === '') return want;
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.search !== '' || url.hash !== '' || issuer.includes('?') || issuer.includes('#')) {
    return 'must not have a query or fragment';
  }
  return undefined;
}
