import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { pino, symbols, type DestinationStream, type Logger } from 'pino';
import { guardOutput, writeOutput } from './stdio-output.js';
import { logContext } from './tracing/spans.js';
import type PinoPretty from 'pino-pretty';

/** `LOG_FORMAT`: JSON lines, lines for a person, or whichever suits where stdout goes. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * Arbor's logger: JSON lines (one object per line, for collectors) unless stdout is a
 * terminal or `format` says `pretty`, then pino-pretty's coloured lines for the person
 * watching. Either way the same fields are logged, to stdout through `writeOutput`: a
 * reader that went away (EPIPE) ends the logging, never the process nor its exit (pino's
 * own stdout destination retried a broken pipe for ever when it flushed at exit).
 */
export function createLogger(
  level: string,
  format: LogFormat = 'auto',
  tty: boolean = process.stdout.isTTY === true,
): Logger {
  const options = {
    level,
    base: { service: 'arbor' },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: requestFields,
  };
  // stderr too: the CLI's last words go there, and a closed one must not crash it either.
  guardOutput(process.stderr);
  if (format === 'json' || (format === 'auto' && !tty)) return pino(options, stdoutLines);
  // Loaded only for a person: a server writing JSON never pays for it.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return pino(
    options,
    pretty({
      destination: new Writable({
        decodeStrings: false,
        write(chunk: unknown, _enc, done) {
          writeOutput(process.stdout, String(chunk));
          done();
        },
      }),
      colorize: tty,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'service,pid,hostname',
    }),
  );
}

/** pino's destination for JSON lines: stdout, each line handed over as it is logged. */
const stdoutLines: DestinationStream = {
  write: (line: string) => void writeOutput(process.stdout, line),
};

/**
 * What every line logged inside a request carries while tracing is on: its trace and span
 * ids and its request id (from the request's trace context, so a line logged by a service
 * through the process's logger carries them too). A request's own child logger already
 * binds `requestId`; it is not repeated. Without tracing, nothing (the doors' child
 * loggers bind the request id).
 */
function requestFields(_o: object, _level: number, logger: Logger): object {
  const f = logContext();
  if (f.requestId === undefined) return f;
  const bound = (logger as unknown as Record<symbol, string | undefined>)[symbols.chindingsSym];
  if (bound?.includes('"requestId":') === true) delete f.requestId;
  return f;
}
