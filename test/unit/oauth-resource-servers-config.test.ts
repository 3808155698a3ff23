import test from 'ava';
import { ConfigError, loadConfig } from '../../src/config.js';
import { matchResourceServer } from '../../src/core/resource-uri.js';

/**
 * ARBOR_OAUTH_RESOURCE_SERVERS (docs/oauth-clients.md): parsed strictly, so that one
 * resource server has one name and a token's `aud` is exactly what the operator wrote.
 */
const VAR = 'ARBOR_OAUTH_RESOURCE_SERVERS';

function refusal(value: string, env: Record<string, string> = {}): string {
  try {
    loadConfig({ [VAR]: value, ...env });
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  return 'accepted';
}

test('config: unset is none; a list keeps each URI as written', (t) => {
  t.deepEqual(loadConfig({}).oauthResourceServers, []);
  const c = loadConfig({
    [VAR]: 'https://mcp.example.com/mcp, https://tools.example.com,http://localhost:3000/mcp',
  });
  t.deepEqual(c.oauthResourceServers, [
    'https://mcp.example.com/mcp',
    'https://tools.example.com',
    'http://localhost:3000/mcp',
  ]);
  t.true(Object.isFrozen(c.oauthResourceServers));
  t.deepEqual(loadConfig({ [VAR]: 'http://[::1]:8000/' }).oauthResourceServers, [
    'http://[::1]:8000/',
  ]);
});

test('config: anything but a canonical https URI without query, fragment or credentials is refused, naming the variable', (t) => {
  const bad = [
    'mcp.example.com',
    '/mcp',
    'urn:example:mcp',
    'ftp://mcp.example.com/',
    'http://mcp.example.com/mcp',
    'https://mcp.example.com/mcp#x',
    'https://mcp.example.com/mcp#',
    'https://mcp.example.com/mcp?tenant=a',
    'https://mcp.example.com/mcp?',
    'https://user:pw@mcp.example.com/mcp',
    'https://MCP.example.com/mcp',
    'https://mcp.example.com:443/mcp',
    'https://mcp.example.com/a/../mcp',
    'https://mcp.example.com/m p',
    `https://mcp.example.com/${'a'.repeat(600)}`,
    'https://mcp.example.com/mcp,https://mcp.example.com/mcp',
    'https://mcp.example.com,https://mcp.example.com/',
    Array.from({ length: 65 }, (_, i) => `https://s${i}.example.com`).join(','),
  ];
  for (const v of bad) {
    const m = refusal(v);
    t.true(m.startsWith(`${VAR} `), `${v}: ${m}`);
  }
  // The canonical spelling is named, so the operator can fix it.
  t.regex(refusal('https://MCP.example.com/mcp'), /https:\/\/mcp\.example\.com\/mcp/);
});

test("config: Arbor's own API and the registry's service are never resource servers", (t) => {
  const env = { ARBOR_ISSUER_URL: 'https://iam.example.com' };
  t.regex(refusal('https://iam.example.com', env), /Arbor's own API/);
  t.regex(refusal('https://iam.example.com/', env), /Arbor's own API/);
  t.regex(refusal('http://localhost:8080'), /Arbor's own API/, 'the default issuer');
  t.regex(
    refusal('https://registry.example.com', {
      ARBOR_REGISTRY_SERVICE: 'https://registry.example.com/',
    }),
    /registry service/,
  );
  t.is(refusal('https://iam.example.com/mcp', env), 'accepted');
});

test('matching: a request names a server by any spelling of the same URI, never a near one', (t) => {
  const servers = ['https://mcp.example.com/mcp', 'https://tools.example.com'];
  t.is(matchResourceServer(servers, 'https://mcp.example.com/mcp'), servers[0]);
  t.is(matchResourceServer(servers, 'HTTPS://MCP.EXAMPLE.COM:443/mcp'), servers[0]);
  t.is(matchResourceServer(servers, 'https://tools.example.com/'), servers[1]);
  for (const near of [
    'https://mcp.example.com/mcp/',
    'https://mcp.example.com/MCP',
    'https://mcp.example.com/mcp#a',
    'https://mcp.example.com/mcp?a',
    'http://mcp.example.com/mcp',
    'https://mcp.example.com.evil.com/mcp',
    'https://evil.com@mcp.example.com/mcp',
    'https://tools.example.com/x',
  ])
    t.is(matchResourceServer(servers, near), undefined, near);
});
