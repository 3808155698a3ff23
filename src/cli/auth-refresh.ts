import { readFile } from 'node:fs/promises';
import type { CredentialEntry, CredentialStore } from './auth-credentials.js';
import { exchangeIdToken } from './auth-exchange.js';
import { oidcRefresh } from './auth-oidc.js';

/** A token this close to its expiry is refreshed rather than printed. */
const MIN_REMAINING_MS = 60_000;

/**
 * The entry's token when it still has time; else a new one, exchanged again at the STS and
 * saved: from the ID token file the login named (read again now, so a projected token that
 * the kubelet rotates keeps working), or from the provider's refresh token.
 * @returns undefined when only a new login helps.
 */
export async function freshEntry(
  store: CredentialStore,
  api: string,
  entry: CredentialEntry,
): Promise<CredentialEntry | undefined> {
  if (Date.parse(entry.expiry) - Date.now() > MIN_REMAINING_MS) return entry;
  if (entry.idTokenFile) return fromIdTokenFile(store, api, entry, entry.idTokenFile);
  if (!entry.refreshToken || !entry.issuer || !entry.clientId) return undefined;
  let signedIn;
  try {
    signedIn = await oidcRefresh(
      { issuer: entry.issuer, clientId: entry.clientId, scopes: entry.scopes ?? [] },
      entry.refreshToken,
    );
  } catch {
    return undefined; // the provider ended the session
  }
  const got = await exchangeIdToken(api, entry.audience, signedIn.idToken, entry.requestedIdentity);
  const next: CredentialEntry = {
    ...entry,
    token: got.token,
    expiry: got.expiry,
    identity: got.identity,
    ...(signedIn.refreshToken ? { refreshToken: signedIn.refreshToken } : {}),
  };
  await store.put(api, next);
  return next;
}

/**
 * A new API token from the ID token in `file`, as it is now.
 * @throws Error when the file cannot be read or the STS refuses its token.
 */
async function fromIdTokenFile(
  store: CredentialStore,
  api: string,
  entry: CredentialEntry,
  file: string,
): Promise<CredentialEntry> {
  const idToken = (await readFile(file, 'utf8')).trim();
  const got = await exchangeIdToken(api, entry.audience, idToken, entry.requestedIdentity);
  const next: CredentialEntry = { ...entry, ...got };
  await store.put(api, next);
  return next;
}
