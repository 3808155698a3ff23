import { Code } from '../../core/rpc-code.js';
import { RpcError } from '../../core/rpc-error.js';

/** One resource a name could mean, as the caller may see it. */
export interface Candidate {
  uid: string;
  description: string;
}

/**
 * FAILED_PRECONDITION for a name that means more than one resource the caller can see:
 * one PreconditionFailure violation (AMBIGUOUS_NAME) per candidate, its uid the subject,
 * so a client can offer them. Names are not unique under a parent, so this is a state of
 * the data, not a malformed request. `more`: there are further candidates not listed.
 */
export function ambiguousName(
  name: string,
  plural: string,
  candidates: readonly Candidate[],
  more: boolean,
): RpcError {
  const count = `${candidates.length}${more ? ' or more' : ''}`;
  const uids = candidates.map((c) => c.uid).join(', ');
  return new RpcError(
    Code.FAILED_PRECONDITION,
    `Precondition failed: ${name} names ${count} ${plural}: ${uids}; give a uid instead`,
    [
      {
        '@type': 'type.googleapis.com/google.rpc.PreconditionFailure',
        violations: candidates.map((c) => ({
          type: 'AMBIGUOUS_NAME',
          subject: c.uid,
          description: c.description,
        })),
      },
    ],
  );
}
