import { fromBinary, type DescMethod } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';

/**
 * The request message in `bytes`, in the binary format.
 *
 * @throws ConnectError INVALID_ARGUMENT when the bytes are not one: a client's fault, never
 *   INTERNAL (Connect's own parser says INTERNAL; the RPC adapter mends that).
 */
export function parseMessage(method: DescMethod, bytes: Uint8Array): unknown {
  try {
    return fromBinary(method.input, bytes);
  } catch (e) {
    throw new ConnectError(
      `parse binary: ${e instanceof Error ? e.message : String(e)}`,
      Code.InvalidArgument,
    );
  }
}

/** A message flagged compressed on a call that named no encoding: the client's fault. */
export function compressedWithoutEncoding(): ConnectError {
  return new ConnectError(
    'received compressed envelope, but do not know how to decompress',
    Code.InvalidArgument,
  );
}
