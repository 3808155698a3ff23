import type { MessageInitShape } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import type { Authenticator } from '../auth/authenticator.js';
import { isRpcError } from '../core/rpc-error.js';
import {
  AdvisoriesService,
  type ImportAdvisoriesRequest,
  type ImportAdvisoriesResponseSchema,
} from '../gen/arbor/vulnerabilities/v2beta1/advisories_pb.js';
import type { AdvisoryImporter, ImportProgress } from '../resources/advisories/advisory-import.js';
import { OsvSpool } from '../resources/advisories/osv-spool.js';
import { principalOf } from './authn.js';
import { toConnectError } from './errors.js';
import type { GrpcRouter } from './json-rpc.js';

/**
 * `AdvisoriesService/ImportAdvisories`: one request per file in, progress and then the
 * summary out; the same importer as the CLI and REST (an error is the call's status).
 */
export function mountAdvisoryImport(
  router: GrpcRouter,
  auth: Authenticator,
  importer: AdvisoryImporter,
): void {
  router.rpc(AdvisoriesService.method.importAdvisories, async function* (requests, ctx) {
    try {
      yield* run(requests, ctx);
    } catch (e) {
      // The unary interceptor does not see a stream's failure: typed here, as it would be.
      throw isRpcError(e) ? toConnectError(e) : e;
    }
  });

  async function* run(
    requests: AsyncIterable<ImportAdvisoriesRequest>,
    ctx: HandlerContext,
  ): AsyncGenerator<MessageInitShape<typeof ImportAdvisoriesResponseSchema>> {
    const p = await principalOf(auth, ctx);
    const progress: ImportProgress[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    let files: OsvSpool | undefined;
    const done = importer.importFiles(
      p,
      async () => {
        files = await OsvSpool.create();
        for await (const r of requests) await files.add(r.name, r.content);
        return files.sources;
      },
      {
        onProgress: (x) => {
          progress.push(x);
          wake?.();
        },
      },
    );
    done
      .finally(() => {
        finished = true;
        wake?.();
      })
      .catch(() => undefined);
    try {
      for (;;) {
        for (let x = progress.shift(); x; x = progress.shift()) {
          yield { event: { case: 'progress', value: x } };
        }
        if (finished) break;
        await new Promise<void>((r) => (wake = r));
      }
      yield { event: { case: 'summary', value: await done } };
    } finally {
      await files?.dispose();
    }
  }
}
