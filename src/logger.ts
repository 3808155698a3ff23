import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';

/** `LOG_FORMAT`: JSON lines, lines for a person, or whichever suits where stdout goes. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * Arbor's logger: JSON lines (one object per line, for collectors) unless stdout is a
 * terminal or `format` says `pretty`, then pino-pretty's coloured lines for the person
 * watching. Either way the same fields are logged.
 */
export function createLogger(
  level: string,
  format: LogFormat = 'auto',
  tty: boolean = process.stdout.isTTY === true,
): Logger {
  const options = { level, base: { service: 'arbor' }, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === 'json' || (format === 'auto' && !tty)) return pino(options);
  // Loaded only for a person: a server writing JSON never pays for it. Synchronous, so a
  // line logged just before process.exit() is on the screen.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return pino(
    options,
    pretty({
      sync: true,
      colorize: tty,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'service,pid,hostname',
    }),
  );
}
