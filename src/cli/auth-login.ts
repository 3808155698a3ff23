import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { browserLogin, exchangeAtSts } from '../auth/oidc-login.js';

const USAGE = `usage: arbor auth login --identity <uid> [--api <url>]
         (--issuer <oidc issuer> --client-id <id> [--scope <s>]... | --id-token-file <path|->)

Logs in at an OIDC provider in the browser (authorization code + PKCE on a loopback
redirect), or takes an ID token from a file or standard input (headless), exchanges it at
Arbor's STS for a one-hour API token of the identity, and prints the token.
The API address defaults to $ARBOR_API_URL, then http://localhost:8080; --audience
(default: the API address) must equal the server's ARBOR_ISSUER_URL.
`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

/** `arbor auth login …`; returns the process exit code. */
export async function authLoginCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        identity: { type: 'string' },
        api: { type: 'string' },
        audience: { type: 'string' },
        issuer: { type: 'string' },
        'client-id': { type: 'string' },
        scope: { type: 'string', multiple: true },
        'id-token-file': { type: 'string' },
        'no-browser': { type: 'boolean' },
      },
    }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const api = values.api ?? process.env.ARBOR_API_URL ?? 'http://localhost:8080';
  if (!values.identity || (!values['id-token-file'] && !(values.issuer && values['client-id']))) {
    process.stderr.write(USAGE);
    return 2;
  }
  try {
    let idToken: string;
    if (values['id-token-file']) {
      const f = values['id-token-file'];
      idToken = (f === '-' ? await readStdin() : await readFile(f, 'utf8')).trim();
    } else {
      idToken = await browserLogin({
        issuer: values.issuer!,
        clientId: values['client-id']!,
        scopes: values.scope ?? [],
        onAuthorizeUrl: (url) => {
          process.stderr.write(`Open this address to log in:\n\n  ${url}\n\n`);
          if (!values['no-browser']) {
            const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
            spawn(opener, [url], { stdio: 'ignore', detached: true })
              .on('error', () => undefined)
              .unref();
          }
        },
      });
    }
    const { token, expiry } = await exchangeAtSts(
      api,
      values.identity,
      idToken,
      values.audience ?? api,
    );
    process.stderr.write(`API token for ${values.identity}, valid until ${expiry}\n`);
    process.stdout.write(`${token}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`arbor auth login: ${(e as Error).message}\n`);
    return 1;
  }
}
