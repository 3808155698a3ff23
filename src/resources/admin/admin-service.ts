import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { failedPrecondition, permissionDenied } from '../../core/rpc-error.js';

/** The database as `arbor status` shows it. */
export interface DatabaseStatus {
  kind: 'postgres' | 'pglite';
  applied: string[];
  pending: string[];
}

export interface AdminServiceDeps {
  authz: Authorizer;
  kind: DatabaseStatus['kind'];
  migrationStatus(): Promise<{ applied: string[]; pending: string[] }>;
  /** PGlite only: a consistent gzipped tarball of the data directory. */
  dumpDataDir?: () => Promise<Blob>;
  resealSecrets(): Promise<{ resealed: number; unreadable: string[] }>;
  /** The ids of the secret keys stored secrets are sealed with. */
  sealedKeyIds(): Promise<string[]>;
}

/** The backup answer's header naming `Backup.secretKeyIds`, comma-separated. */
export const SECRET_KEY_IDS_HEADER = 'arbor-secret-key-ids';

/** A backup of the embedded database, and the secret keys its sealed secrets need. */
export interface Backup {
  dump: Blob;
  /**
   * The ids of the secret keys (`secretKeyId`) the sealed secrets in the dump name: a
   * backup whose keys lack one of them restores secrets that cannot be opened.
   */
  secretKeyIds: string[];
}

/**
 * What the admin commands (`arbor status`, `backup`, `secret-key reseal`) do through a
 * running server, which is the one process that may open an embedded database. Every
 * operation is the administrator's alone.
 */
export class AdminService {
  constructor(private readonly d: AdminServiceDeps) {}

  private only(p: Principal, what: string): void {
    if (!this.d.authz.isSuperuser(p)) throw permissionDenied(`only an administrator can ${what}`);
  }

  /** @throws RpcError PERMISSION_DENIED unless the caller is a superuser. */
  async status(p: Principal): Promise<DatabaseStatus> {
    this.only(p, 'read the database status');
    return { kind: this.d.kind, ...(await this.d.migrationStatus()) };
  }

  /**
   * A backup of the embedded database (what `arbor restore` loads). Signing and secret keys
   * are files beside it and are not served: they never leave the machine through the API;
   * only the ids of the secret keys its sealed secrets need, for the caller to check the
   * keys it archives beside it (a key's id is a hash of the key, not the key).
   * @throws RpcError PERMISSION_DENIED unless the caller is a superuser; FAILED_PRECONDITION
   *   on PostgreSQL (back it up with pg_dump).
   */
  async backup(p: Principal): Promise<Backup> {
    this.only(p, 'back up the database');
    if (!this.d.dumpDataDir) {
      throw failedPrecondition(
        'NOT_EMBEDDED',
        'the server uses PostgreSQL: back it up with pg_dump (see the README)',
      );
    }
    // Read before the dump: a reseal in between seals with the current key, which the
    // server holds, so the ids can only be fewer than the dump's, never other.
    const secretKeyIds = await this.d.sealedKeyIds();
    return { dump: await this.d.dumpDataDir(), secretKeyIds };
  }

  /**
   * Seal every stored secret with the current key (see IdentityProviderService).
   * @throws RpcError PERMISSION_DENIED unless the caller is a superuser.
   */
  async resealSecrets(p: Principal): Promise<{ resealed: number; unreadable: string[] }> {
    this.only(p, 'reseal secrets');
    return this.d.resealSecrets();
  }
}
