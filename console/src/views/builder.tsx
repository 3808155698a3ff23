import { useState } from 'preact/hooks';
import { post } from '../api';
import {
  identityBody,
  identityCli,
  identityCurl,
  identityYaml,
  parseClaims,
  type IdentityDraft,
} from '../identity-text';
import type { ClaimMatch, Identity } from '../model';
import { href } from '../route';
import { ErrorBox, Field, Section, useAction } from '../ui';

/** The claim tester's answer (`POST /iam/v2beta1/access:testToken`). */
interface TestResult {
  results: Array<{
    identityUid?: string;
    identityName: string;
    wouldAssume: boolean;
    clauses: Array<{ clause: string; passed: boolean; reason: string }>;
  }>;
}

function claimMatchOf(f: Record<string, string>, claimsText: string): ClaimMatch {
  const m: ClaimMatch = {};
  for (const k of ['issuer', 'issuerPattern', 'subject', 'subjectPattern', 'audience'] as const) {
    const v = f[k]?.trim();
    if (v) m[k] = v;
  }
  const claims = parseClaims(claimsText);
  if (Object.keys(claims).length > 0) m.claims = claims;
  return m;
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

/**
 * Fill in a claimMatch, test a token or claims against it before saving, see the same
 * identity as a CRD, a curl and an `arbor` command, and create it.
 */
export function BuilderView({ groupUid }: { groupUid: string }) {
  const [group, setGroup] = useState(groupUid);
  const [f, setF] = useState<Record<string, string>>({});
  const [claimsText, setClaimsText] = useState('');
  const [sample, setSample] = useState('');
  const [result, setResult] = useState<TestResult | undefined>(undefined);
  const [created, setCreated] = useState<Identity | undefined>(undefined);
  const tester = useAction();
  const creator = useAction();
  const set = (k: string) => (v: string) => setF({ ...f, [k]: v });
  const draft: IdentityDraft = {
    groupUid: group,
    name: f.name ?? '',
    description: f.description ?? '',
    claimMatch: claimMatchOf(f, claimsText),
  };
  return (
    <div>
      <h1>Identity builder</h1>
      <Section id="match-h" title="The identity">
        <Field label="Group uid" name="group" value={group} onInput={setGroup} required />
        <Field label="Name" name="name" value={f.name ?? ''} onInput={set('name')} required />
        <Field
          label="Description"
          name="description"
          value={f.description ?? ''}
          onInput={set('description')}
        />
        <Field
          label="Issuer (exact)"
          name="issuer"
          value={f.issuer ?? ''}
          onInput={set('issuer')}
        />
        <Field
          label="Issuer pattern (RE2)"
          name="issuerPattern"
          value={f.issuerPattern ?? ''}
          onInput={set('issuerPattern')}
        />
        <Field
          label="Subject (exact)"
          name="subject"
          value={f.subject ?? ''}
          onInput={set('subject')}
        />
        <Field
          label="Subject pattern (RE2)"
          name="subjectPattern"
          value={f.subjectPattern ?? ''}
          onInput={set('subjectPattern')}
        />
        <Field
          label="Audience"
          name="audience"
          value={f.audience ?? ''}
          onInput={set('audience')}
        />
        <label class="field">
          <span>Other claims, one claim=value a line</span>
          <textarea
            name="claims"
            rows={3}
            value={claimsText}
            onInput={(e) => setClaimsText((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
      </Section>
      <Section id="tester-h" title="Claim tester">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void tester.run(async () => {
              setResult(undefined);
              setResult(
                await post<TestResult>('/iam/v2beta1/access:testToken', {
                  ...testInput(sample),
                  claimMatch: draft.claimMatch,
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
      <Section id="as-code-h" title="As code">
        <h3>Kubernetes (Identity CRD)</h3>
        <pre class="code" aria-label="Identity CRD YAML">
          {identityYaml(draft)}
        </pre>
        <h3>curl</h3>
        <pre class="code" aria-label="curl command">
          {identityCurl(draft, location.origin)}
        </pre>
        <h3>arbor CLI</h3>
        <pre class="code" aria-label="arbor command">
          {identityCli(draft)}
        </pre>
        <button
          type="button"
          disabled={creator.busy || !group || !draft.name}
          onClick={() =>
            void creator.run(async () => {
              setCreated(
                await post<Identity>(`/iam/v2beta1/identities/${group}`, identityBody(draft)),
              );
            })
          }
        >
          Create this identity
        </button>
        <ErrorBox error={creator.error} />
        {created ? (
          <p role="status">
            Created <strong>{created.name}</strong>:{' '}
            <a href={href('group', group)}>see it in its group</a>.
          </p>
        ) : null}
      </Section>
    </div>
  );
}
