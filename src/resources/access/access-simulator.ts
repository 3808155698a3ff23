import type { Principal } from '../../auth/principal.js';
import { Code } from '../../core/rpc-code.js';
import { RpcError } from '../../core/rpc-error.js';
import { parseInput } from '../validate.js';
import type { SimulateAnswer } from './simulate.js';
import { simulateSchema } from './simulate-input.js';

/** `access:simulate`: the access delta of a change set, changing nothing. */
export class AccessSimulator {
  /** @throws RpcError INVALID_ARGUMENT. */
  simulate(_p: Principal, body: Record<string, unknown>): Promise<SimulateAnswer> {
    parseInput(simulateSchema, body);
    return Promise.reject(new RpcError(Code.UNIMPLEMENTED, 'access:simulate is being built'));
  }
}
