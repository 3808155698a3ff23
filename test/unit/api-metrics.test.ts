import test from 'ava';
import { ApiMetrics } from '../../src/metrics/api-metrics.js';

test('api metrics: a JSON fetcher is counted by document kind and outcome', async (t) => {
  const m = new ApiMetrics();
  const fetcher = m.instrumentJsonFetcher({
    getJson: (url: string) =>
      url.endsWith('/bad') ? Promise.reject(new Error('refused')) : Promise.resolve({ url }),
  });
  t.deepEqual(await fetcher.getJson('https://i.example/.well-known/openid-configuration'), {
    url: 'https://i.example/.well-known/openid-configuration',
  });
  await fetcher.getJson('https://i.example/keys');
  await t.throwsAsync(fetcher.getJson('https://i.example/bad'), { message: 'refused' });
  const text = await m.registry.metrics();
  t.regex(text, /^arbor_upstream_fetches_total\{kind="discovery",outcome="ok"\} 1$/m);
  t.regex(text, /^arbor_upstream_fetches_total\{kind="jwks",outcome="ok"\} 1$/m);
  t.regex(text, /^arbor_upstream_fetches_total\{kind="jwks",outcome="error"\} 1$/m);
  t.regex(text, /^arbor_upstream_fetch_duration_seconds_count\{kind="jwks"\} 2$/m);
});
