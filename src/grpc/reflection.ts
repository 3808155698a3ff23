import { toBinary, type DescFile, type DescMessage, type DescService } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import type { ConnectRouter } from '@connectrpc/connect';
import { Code } from '../core/rpc-code.js';
import * as v1 from '../gen/grpc/reflection/v1/reflection_pb.js';
import * as v1alpha from '../gen/grpc/reflection/v1alpha/reflection_pb.js';

/** The request oneof, the same in v1 and v1alpha. */
type Request = v1.ServerReflectionRequest['messageRequest'];

/** Every file that declares the services, and the files those import, by name and symbol. */
class DescriptorIndex {
  readonly files = new Map<string, DescFile>();
  readonly symbols = new Map<string, DescFile>();

  constructor(readonly services: readonly DescService[]) {
    for (const s of services) this.addFile(s.file);
  }

  private addFile(f: DescFile): void {
    if (this.files.has(f.proto.name)) return;
    this.files.set(f.proto.name, f);
    for (const d of f.dependencies) this.addFile(d);
    for (const s of f.services) {
      this.symbols.set(s.typeName, f);
      for (const m of s.methods) this.symbols.set(`${s.typeName}.${m.name}`, f);
    }
    for (const e of f.enums) this.symbols.set(e.typeName, f);
    for (const e of f.extensions) this.symbols.set(e.typeName, f);
    const addMessage = (m: DescMessage) => {
      this.symbols.set(m.typeName, f);
      for (const field of m.fields) this.symbols.set(`${m.typeName}.${field.name}`, f);
      for (const e of m.nestedEnums) this.symbols.set(e.typeName, f);
      m.nestedMessages.forEach(addMessage);
    };
    f.messages.forEach(addMessage);
  }
}

/**
 * One reflection stream: answers in the shape v1 and v1alpha share. Like grpc-go, a file
 * descriptor answer carries the file and those of its imports not yet sent on this stream.
 */
function answerer(index: DescriptorIndex) {
  const sent = new Set<string>();
  const withImports = (f: DescFile): Uint8Array[] => {
    const out: Uint8Array[] = [];
    const visit = (x: DescFile, requested: boolean) => {
      if (!requested && sent.has(x.proto.name)) return;
      sent.add(x.proto.name);
      out.push(toBinary(FileDescriptorProtoSchema, x.proto));
      for (const d of x.dependencies) visit(d, false);
    };
    visit(f, true);
    return out;
  };
  const notFound = (what: string) => ({
    case: 'errorResponse' as const,
    value: { errorCode: Code.NOT_FOUND, errorMessage: `${what} not found` },
  });
  const files = (f: DescFile | undefined, what: string) =>
    f
      ? {
          case: 'fileDescriptorResponse' as const,
          value: { fileDescriptorProto: withImports(f) },
        }
      : notFound(what);

  return (r: Request) => {
    switch (r.case) {
      case 'listServices':
        return {
          case: 'listServicesResponse' as const,
          value: { service: index.services.map((s) => ({ name: s.typeName })) },
        };
      case 'fileByFilename':
        return files(index.files.get(r.value), `file ${r.value}`);
      case 'fileContainingSymbol':
        return files(index.symbols.get(r.value), `symbol ${r.value}`);
      case 'fileContainingExtension':
        // The API declares no extensions.
        return notFound(`extension ${r.value.extensionNumber} of ${r.value.containingType}`);
      case 'allExtensionNumbersOfType':
        return index.symbols.has(r.value)
          ? {
              case: 'allExtensionNumbersResponse' as const,
              value: { baseTypeName: r.value, extensionNumber: [] },
            }
          : notFound(`type ${r.value}`);
      default:
        return {
          case: 'errorResponse' as const,
          value: { errorCode: Code.INVALID_ARGUMENT, errorMessage: 'empty reflection request' },
        };
    }
  };
}

/**
 * gRPC server reflection, v1 and the older v1alpha that many tools still ask for, built
 * from the descriptors protobuf-es embeds in the generated code, so `grpcurl` needs no
 * proto files. Public: descriptors are the API's shape, not its data.
 */
export function mountReflection(router: ConnectRouter, services: readonly DescService[]): void {
  const all = [...services, v1.ServerReflection, v1alpha.ServerReflection];
  const index = new DescriptorIndex(all);
  router.service(v1.ServerReflection, {
    async *serverReflectionInfo(requests) {
      const answer = answerer(index);
      for await (const req of requests) {
        yield {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(req.messageRequest),
        };
      }
    },
  });
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      const answer = answerer(index);
      for await (const req of requests) {
        yield {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(req.messageRequest as Request),
        };
      }
    },
  });
}
