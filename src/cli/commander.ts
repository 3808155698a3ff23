import { createRequire } from 'node:module';
import type * as Commander from 'commander';

/**
 * commander, loaded as the CommonJS module it is. Importing it as ESM goes through its
 * `esm.mjs` wrapper and the ESM loader's CommonJS translation, which costs `arbor --help`
 * a measurable share of its start-up (bounded at 1.5× a bare `node -e 0`); `require`
 * loads the same classes directly. Every CLI module takes commander's values from here.
 */
const commander = createRequire(import.meta.url)('commander') as typeof Commander;

export const { Command, CommanderError, Option } = commander;
export type Command = Commander.Command;
export type CommanderError = Commander.CommanderError;
export type Option = Commander.Option;
