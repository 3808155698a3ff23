import { useState } from 'preact/hooks';
import { listPage, post } from '../api';
import { ConditionText, evaluateCondition, type ConditionAnswer } from '../condition';
import type { ClaimMatch, RoleBinding } from '../model';
import { ErrorBox, NameOf, Section, useAction, useLoad } from '../ui';

/** The claim tester's answer (`POST /iam/v2beta1/access:testToken`). */
interface TestResult {
  results: Array<{
    identityUid?: string;
    identityName: string;
    wouldAssume: boolean;
    clauses: Array<{ clause: string; passed: boolean; reason: string }>;
  }>;
}

/** The claims of what is tested: the JSON object, or a JWT's payload (read, not verified). */
function claimsOfSample(text: string): Record<string, unknown> {
  const t = text.trim();
  try {
    if (t.startsWith('{')) return JSON.parse(t) as Record<string, unknown>;
    const part = t.split('.')[1] ?? '';
    return JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** What a conditional binding would do for these claims, now, on a resource not yet known. */
type Verdict = 'would hold' | 'would not hold' | 'depends on the resource';

function verdictOf(a: ConditionAnswer): Verdict {
  // An expression that reads the resource is decided per resource: with it left empty here,
  // its answer says nothing about any real one.
  if (a.reads.some((r) => r.startsWith('resource.'))) return 'depends on the resource';
  return a.result ? 'would hold' : 'would not hold';
}

/**
 * The conditional bindings of an identity the claims would assume (those at groups where the
 * caller may list bindings, at most 200), each evaluated with `token.claims` the tested
 * claims, `request.time` now and the resource empty.
 */
function ConditionalBindings(props: { identityUid: string; claims: Record<string, unknown> }) {
  const { identityUid, claims } = props;
  const rows = useLoad(async () => {
    const page = await listPage<RoleBinding>('/iam/v2beta1/roleBindings', 'roleBindings', {
      identity: identityUid,
      page_size: 200,
    });
    const conditional = page.items.filter((b) => b.condition !== undefined);
    return Promise.all(
      conditional.map(async (b) => {
        const a = await evaluateCondition(b.condition!.expression, {
          time: new Date().toISOString(),
          claims,
        });
        return { b, a, verdict: verdictOf(a) };
      }),
    );
  }, [identityUid, JSON.stringify(claims)]);
  if (rows.error) return <ErrorBox error={rows.error} />;
  if (!rows.data)
    return rows.loading ? <p class="hint">Reading its conditional bindings…</p> : null;
  if (rows.data.length === 0)
    return <p class="hint">It has no conditional binding you may list.</p>;
  return (
    <table class="rows" aria-label="Conditional bindings with these claims">
      <thead>
        <tr>
          <th scope="col">Role</th>
          <th scope="col">Group</th>
          <th scope="col">Condition</th>
          <th scope="col">With these claims, now</th>
        </tr>
      </thead>
      <tbody>
        {rows.data.map(({ b, a, verdict }) => (
          <tr key={b.uid} data-uid={b.uid}>
            <td>{b.role.name || b.role.uid}</td>
            <td>
              <NameOf kind="group" uid={b.group.uid} />
            </td>
            <td>
              <ConditionText condition={b.condition} />
            </td>
            <td
              class={
                verdict === 'would hold'
                  ? 'allowed'
                  : verdict === 'would not hold'
                    ? 'denied'
                    : undefined
              }
            >
              {verdict}
              {a.error && verdict === 'would not hold' ? ` (${a.error.message})` : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What to test: a JWT as it is, or a JSON object of claims. */
function testInput(text: string): { token: string } | { claims: Record<string, unknown> } {
  const t = text.trim();
  if (t.startsWith('{')) return { claims: JSON.parse(t) as Record<string, unknown> };
  return { token: t };
}

function Results({ result, claims }: { result: TestResult; claims: Record<string, unknown> }) {
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
          {r.wouldAssume && r.identityUid ? (
            <ConditionalBindings identityUid={r.identityUid} claims={claims} />
          ) : null}
        </div>
      ))}
    </div>
  );
}

/**
 * Test a JWT or a JSON object of claims against the draft claimMatch before saving, against
 * one identity, or (neither given) against every claim-match identity the caller may list;
 * for each identity the claims would assume, its conditional bindings and whether each
 * condition would hold for these claims.
 */
export function ClaimTester(props: { claimMatch?: ClaimMatch; identityUid?: string }) {
  const { claimMatch, identityUid } = props;
  const [sample, setSample] = useState('');
  const [result, setResult] = useState<
    { answer: TestResult; claims: Record<string, unknown> } | undefined
  >(undefined);
  const tester = useAction();
  return (
    <Section id="tester-h" title="Claim tester">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void tester.run(async () => {
            setResult(undefined);
            const answer = await post<TestResult>('/iam/v2beta1/access:testToken', {
              ...testInput(sample),
              ...(claimMatch ? { claimMatch } : {}),
              ...(identityUid ? { identityUid } : {}),
            });
            setResult({ answer, claims: claimsOfSample(sample) });
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
      {result ? <Results result={result.answer} claims={result.claims} /> : null}
    </Section>
  );
}
