#!/usr/bin/env node
const argv = process.argv.slice(2);
// `--version` alone is answered before the command tree (and commander) is loaded: it is
// what scripts and package managers run to probe the binary.
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const { packageVersion } = await import('./cli/package-version.js');
  process.stdout.write(`${packageVersion()}\n`);
} else {
  const { runCli } = await import('./cli/program.js');
  await runCli(argv);
}
