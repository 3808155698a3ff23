import type { Pinger } from '../../resources/health-service.js';
import type { Tx } from '../../resources/tx.js';
import { kx } from '../unit-of-work.js';

export class KnexPinger implements Pinger {
  async ping(tx: Tx): Promise<void> {
    await kx(tx).raw('SELECT 1');
  }
}
