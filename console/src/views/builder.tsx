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
import { Picker, usePicked } from '../picker';
import { href } from '../route';
import { usePermissions } from '../can';
import { ErrorBox, Field, Section, useAction } from '../ui';
import { ClaimTester } from './claim-tester';

const MATCH_FIELDS = [
  ['issuer', 'Issuer (exact)'],
  ['issuerPattern', 'Issuer pattern (RE2)'],
  ['subject', 'Subject (exact)'],
  ['subjectPattern', 'Subject pattern (RE2)'],
  ['audience', 'Audience'],
] as const;

function claimMatchOf(f: Record<string, string>, claimsText: string): ClaimMatch {
  const m: ClaimMatch = {};
  for (const [k] of MATCH_FIELDS) {
    const v = f[k]?.trim();
    if (v) m[k] = v;
  }
  const claims = parseClaims(claimsText);
  if (Object.keys(claims).length > 0) m.claims = claims;
  return m;
}

/** The identity's own fields: where, its name, and the claims a token must carry. */
function MatchFields(props: {
  f: Record<string, string>;
  set: (k: string) => (v: string) => void;
  claimsText: string;
  setClaimsText: (v: string) => void;
}) {
  const { f, set } = props;
  return (
    <>
      <Field label="Name" name="name" value={f.name ?? ''} onInput={set('name')} required />
      <Field
        label="Description"
        name="description"
        value={f.description ?? ''}
        onInput={set('description')}
      />
      {MATCH_FIELDS.map(([k, label]) => (
        <Field key={k} label={label} name={k} value={f[k] ?? ''} onInput={set(k)} />
      ))}
      <label class="field">
        <span>Other claims, one claim=value a line</span>
        <textarea
          name="claims"
          rows={3}
          value={props.claimsText}
          onInput={(e) => props.setClaimsText((e.currentTarget as HTMLTextAreaElement).value)}
        />
      </label>
    </>
  );
}

/** What the builder's one action needs, asked at the picked group (one batch check). */
const CREATE = ['identity.create'] as const;

/** The same identity as a CRD, a curl and an `arbor` command, and the button that creates it. */
function AsCode({ draft }: { draft: IdentityDraft }) {
  const can = usePermissions(draft.groupUid, CREATE);
  const [created, setCreated] = useState<Identity | undefined>(undefined);
  const creator = useAction();
  const group = draft.groupUid;
  return (
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
      {!group ? (
        <p class="hint">Pick a group to create the identity there.</p>
      ) : can === undefined ? null : !can('identity.create') ? (
        <p class="cannot">
          You cannot create identities in this group; the commands above are for someone who can.
        </p>
      ) : (
        <button
          type="button"
          disabled={creator.busy || !draft.name}
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
      )}
      <ErrorBox error={creator.error} />
      {created ? (
        <p role="status">
          Created <strong>{created.name}</strong>:{' '}
          <a href={href('group', group)}>see it in its group</a>.
        </p>
      ) : null}
    </Section>
  );
}

/**
 * Fill in a claimMatch, test a token or claims against it before saving, see the same
 * identity as a CRD, a curl and an `arbor` command, and create it. The group is picked by
 * name (a group page's link fills it in).
 */
export function BuilderView({ groupUid }: { groupUid: string }) {
  const [group, setGroup] = usePicked('group', groupUid);
  const [f, setF] = useState<Record<string, string>>({});
  const [claimsText, setClaimsText] = useState('');
  const set = (k: string) => (v: string) => setF({ ...f, [k]: v });
  const draft: IdentityDraft = {
    groupUid: group?.uid ?? '',
    name: f.name ?? '',
    description: f.description ?? '',
    claimMatch: claimMatchOf(f, claimsText),
  };
  return (
    <div>
      <h1>Identity builder</h1>
      <Section id="match-h" title="The identity">
        <Picker kind="group" label="Group" name="group" value={group} onPick={setGroup} required />
        <MatchFields f={f} set={set} claimsText={claimsText} setClaimsText={setClaimsText} />
      </Section>
      <ClaimTester claimMatch={draft.claimMatch} />
      <AsCode draft={draft} />
    </div>
  );
}
