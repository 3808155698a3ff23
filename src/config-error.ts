/**
 * A configuration error: a variable or file at fault, said in one line. Its own module so
 * that the CLI can recognise one without loading the configuration schema (and zod).
 */
export class ConfigError extends Error {}
