import { Code, ConnectError } from '@connectrpc/connect';
import test from 'ava';
import { pino, type Logger } from 'pino';
import { notFound } from '../../src/core/rpc-error.js';
import { errorsAndLogging } from '../../src/grpc/errors.js';

/** A real pino logger at `level` whose lines are kept, and a count of `info` calls made. */
function logger(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const real = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const calls = { info: 0 };
  const spy = new Proxy(real, {
    get(target, key, receiver) {
      if (key === 'info') calls.info++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  }) as Logger;
  return { log: spy, lines, calls };
}

const request = {
  stream: false,
  service: { typeName: 'arbor.iam.v2beta1.GroupsService' },
  method: { name: 'GetGroup' },
  header: new Headers({ 'content-type': 'application/grpc' }),
  url: 'http://localhost/arbor.iam.v2beta1.GroupsService/GetGroup',
} as never;

const call = (log: Logger, next: () => Promise<unknown>) =>
  errorsAndLogging(log)(next as never)(request);

test('grpc logging: at warn a call that ends well makes no log line, nor asks for one', async (t) => {
  const l = logger('warn');
  const answer = { stream: false, message: {} } as never;
  t.is(await call(l.log, () => Promise.resolve(answer)), answer);
  t.is(l.calls.info, 0);
  t.deepEqual(l.lines, []);
});

test('grpc logging: at info one line per call, with the method, code and duration', async (t) => {
  const l = logger('info');
  await call(l.log, () => Promise.resolve({}));
  await t.throwsAsync(call(l.log, () => Promise.reject(notFound('Group', 'x'))));
  t.deepEqual(
    l.lines.map((x) => [x.msg, x.rpc, x.code, typeof x.ms]),
    [
      ['rpc', 'arbor.iam.v2beta1.GroupsService/GetGroup', 'OK', 'number'],
      ['rpc', 'arbor.iam.v2beta1.GroupsService/GetGroup', 'NotFound', 'number'],
    ],
  );
});

test('grpc errors: an RpcError keeps its code; a fault is INTERNAL and logged even at warn', async (t) => {
  const l = logger('warn');
  const known = await t.throwsAsync(
    call(l.log, () => Promise.reject(notFound('Group', 'x'))),
    {
      instanceOf: ConnectError,
    },
  );
  t.is(known.code, Code.NotFound);
  const fault = await t.throwsAsync(
    call(l.log, () => Promise.reject(new Error('SELECT secret FROM x'))),
    { instanceOf: ConnectError },
  );
  t.is(fault.code, Code.Internal);
  t.false(fault.message.includes('SELECT'));
  t.deepEqual(
    l.lines.map((x) => x.msg),
    ['unhandled error'],
  );
});
