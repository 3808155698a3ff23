import { fromBinary, toJson, type JsonValue } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { getJson } from './fixtures.js';
import { pairTransports, rpcPath, type PairCase } from './grpc-cases.js';

/** A Get answer by its uid and name, a page by its uids in order and its totalCount. */
const key = (x: any) =>
  JSON.stringify(x.groups ? [x.groups.map((g: any) => g.uid), x.totalCount] : [x.uid, x.name]);

/** One unary call by @grpc/grpc-js, an implementation independent of the server's and ours. */
function grpcJsCall(client: grpc.Client, p: PairCase, token: string): Promise<JsonValue> {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      rpcPath(p.method),
      () => Buffer.from(p.request),
      (buf: Buffer) => fromBinary(p.method.output, buf),
      {},
      md,
      (err, res) => (err ? reject(err) : resolve(toJson(p.method.output, res!))),
    );
  });
}

/**
 * Before any load: ask each pair once over REST, once with @grpc/grpc-js, and once with
 * the very bytes the load generator will send, and compare the uids (and totalCount) the
 * three return. A gRPC figure means something only if it answers the REST request.
 */
export async function sameGrpcAnswers(
  pairs: PairCase[],
  arborUrl: string,
  token: string,
  log: (m: string) => void,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const client = new grpc.Client(new URL(arborUrl).host, grpc.credentials.createInsecure());
  try {
    for (const p of pairs) {
      const rest = await getJson<any>(p.restUrl, token);
      const viaGrpcJs = await grpcJsCall(client, p, token);
      const bytes = await pairTransports(arborUrl, p, token).grpc.once();
      const viaLoad = toJson(p.method.output, fromBinary(p.method.output, bytes));
      const same = key(rest) === key(viaGrpcJs) && key(rest) === key(viaLoad);
      out[p.name] = same
        ? `same ${rest.groups ? `${rest.groups.length} rows, totalCount ${rest.totalCount}` : 'group'}`
        : `DIFFERENT answers: REST ${key(rest)}, grpc-js ${key(viaGrpcJs)}, load bytes ${key(viaLoad)}`;
      log(`  ${p.name}: REST, grpc-js and the load's bytes: ${out[p.name]}`);
    }
  } finally {
    client.close();
  }
  return out;
}
