import { useState } from 'preact/hooks';
import { post } from '../api';
import type { ClaimMatch } from '../model';
import { ErrorBox, Section, useAction } from '../ui';

/** The claim tester's answer (`POST /iam/v2beta1/access:testToken`). */
interface TestResult {
  results: Array<{
    identityUid?: string;
    identityName: string;
    wouldAssume: boolean;
    clauses: Array<{ clause: string; passed: boolean; reason: string }>;
  }>;
}

/** What to test: a JWT as it is, or a JSON object of claims. */
function testInput(text: string): { token: string } | { claims: Record<string, unknown> } {
  const t = text.trim();
  if (t.startsWith('{')) return { claims: JSON.parse(t) as Record<string, unknown> };
  return { token: t };
}

function Results({ result }: { result: TestResult }) {
  return (
    <div role="status" class="test-results">
      {result.results.map((r, i) => (
        <div key={r.identityUid ?? i}>
          <p class={r.wouldAssume ? 'allowed' : 'denied'}>
            {r.identityName || 'This claimMatch'}:{' '}
            {r.wouldAssume ? 'would be assumed' : 'would not be assumed'}
          </p>
          <table class="rows" aria-label={`Clauses for ${r.identityName || 'this claimMatch'}`}>
            <thead>
              <tr>
                <th scope="col">Clause</th>
                <th scope="col">Result</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {r.clauses.map((c) => (
                <tr key={c.clause}>
                  <td>
                    <code>{c.clause}</code>
                  </td>
                  <td>{c.passed ? 'passes' : 'fails'}</td>
                  <td>{c.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </div>
  );
}

/** Test a JWT or a JSON object of claims against the draft claimMatch, before saving. */
export function ClaimTester({ claimMatch }: { claimMatch: ClaimMatch }) {
  const [sample, setSample] = useState('');
  const [result, setResult] = useState<TestResult | undefined>(undefined);
  const tester = useAction();
  return (
    <Section id="tester-h" title="Claim tester">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void tester.run(async () => {
            setResult(undefined);
            setResult(
              await post<TestResult>('/iam/v2beta1/access:testToken', {
                ...testInput(sample),
                claimMatch,
              }),
            );
          });
        }}
      >
        <label class="field">
          <span>A JWT, or its claims as JSON</span>
          <textarea
            name="sample"
            rows={4}
            spellcheck={false}
            value={sample}
            onInput={(e) => setSample((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" disabled={tester.busy || sample.trim() === ''}>
          Test
        </button>
      </form>
      <ErrorBox error={tester.error} />
      {result ? <Results result={result} /> : null}
    </Section>
  );
}
