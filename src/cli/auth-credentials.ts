import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeSecretFile } from '../auth/secret-file.js';

/** What `arbor auth login` keeps for one Arbor API address. */
export interface CredentialEntry {
  /** The Arbor API token and when it expires (ISO 8601). */
  token: string;
  expiry: string;
  /** The identity the token is for, and who signed in (for `auth status`). */
  identity: string;
  displayName?: string;
  /** The OIDC provider and client the person signed in with: what refreshing needs. */
  issuer?: string;
  clientId?: string;
  scopes?: string[];
  refreshToken?: string;
  /** `--id-token-file`: read again for every new API token (a projected token rotates). */
  idTokenFile?: string;
  /** The STS audience asked for, and the identity asked for (unset: the person's own). */
  audience: string;
  requestedIdentity?: string;
}

interface CredentialFile {
  version: 1;
  entries: Record<string, CredentialEntry>;
}

/** `$XDG_CONFIG_HOME/arbor/credentials.json`, else `~/.config/arbor/credentials.json`. */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'arbor', 'credentials.json');
}

/** API addresses are keys: one entry each, however the address was typed. */
export function apiKey(api: string): string {
  return api.replace(/\/+$/, '');
}

/**
 * The user's Arbor credentials: one entry per API address, in a file only the user can
 * read (0600, in a 0700 directory), replaced atomically so a crash never leaves half a file.
 */
export class CredentialStore {
  constructor(readonly path: string = credentialsPath()) {}

  private async load(): Promise<CredentialFile> {
    try {
      const parsed = JSON.parse(await readFile(this.path, 'utf8')) as Partial<CredentialFile>;
      return { version: 1, entries: parsed.entries ?? {} };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, entries: {} };
      throw new Error(`cannot read ${this.path}: ${(e as Error).message}`);
    }
  }

  private async save(file: CredentialFile): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    // A random, exclusive temporary name: nothing planted beside it is written through.
    writeSecretFile(this.path, `${JSON.stringify(file, null, 2)}\n`);
  }

  async get(api: string): Promise<CredentialEntry | undefined> {
    return (await this.load()).entries[apiKey(api)];
  }

  async all(): Promise<Record<string, CredentialEntry>> {
    return (await this.load()).entries;
  }

  async put(api: string, entry: CredentialEntry): Promise<void> {
    const file = await this.load();
    file.entries[apiKey(api)] = entry;
    await this.save(file);
  }

  /** @returns whether there was an entry to remove. */
  async remove(api: string): Promise<boolean> {
    const file = await this.load();
    if (!(apiKey(api) in file.entries)) return false;
    delete file.entries[apiKey(api)];
    await this.save(file);
    return true;
  }
}
