import type { Tx, UnitOfWork } from './tx.js';

export interface Pinger {
  ping(tx: Tx): Promise<void>;
}

/** Readiness: the database answers a trivial query. */
export class HealthService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pinger: Pinger,
  ) {}

  /** @throws RpcError UNAVAILABLE when the database cannot be reached. */
  async ready(): Promise<void> {
    await this.uow.read((tx) => this.pinger.ping(tx));
  }
}
