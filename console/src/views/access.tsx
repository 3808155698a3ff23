import { useState } from 'preact/hooks';
import { get, post, withQuery } from '../api';
import { useAuditReadable } from '../can';
import type { Named } from '../model';
import { Picker, usePicked, type Picked } from '../picker';
import { go, href } from '../route';
import { ConditionLine, type BindingCondition } from '../condition';
import { ErrorBox, NameOf, Section, useAction, useLoad } from '../ui';
import { ActingForLine, type ActingFor } from './acting-for';
import { CheckAnswer, type CheckResult, type Grant } from './check-answer';

interface GroupAccess {
  groupUid: string;
  bindings: Array<{ bindingUid: string; role: Named }>;
  capabilities: string[];
  effectiveCapabilities?: string[];
  /** Conditional bindings here: they grant only on a decision where `when` holds. */
  conditional?: Array<{ bindingUid: string; role: Named; when: BindingCondition }>;
}
interface Holder {
  identityUid: string;
  grants: Array<Grant & { when?: BindingCondition }>;
}

/** Role names of a group's bindings; a role the caller cannot read by its uid. */
function roleNames(bindings: GroupAccess['bindings']) {
  return bindings.map((b, i) => (
    <span key={b.bindingUid}>
      {i > 0 ? ', ' : ''}
      {b.role.name || <NameOf kind="role" uid={b.role.uid} />}
    </span>
  ));
}

/** What an identity can do, where, and through which bindings (`access:whatCan`). */
function WhatCan({ identity }: { identity: string }) {
  const page = useLoad<{ items: GroupAccess[]; actingFor?: ActingFor } | undefined>(async () => {
    if (!identity) return undefined;
    const r = await get<{ groups?: GroupAccess[]; actingFor?: ActingFor }>(
      withQuery('/iam/v2beta1/access:whatCan', { identity, page_size: 50 }),
    );
    return { items: r.groups ?? [], ...(r.actingFor ? { actingFor: r.actingFor } : {}) };
  }, [identity]);
  if (!identity) return null;
  if (page.error) return <ErrorBox error={page.error} />;
  if (!page.data) return null;
  const actingFor = <ActingForLine a={page.data.actingFor} />;
  if (page.data.items.length === 0)
    return (
      <>
        {actingFor}
        <p role="status">This identity holds no role binding you can see.</p>
      </>
    );
  return (
    <>
      {actingFor}
      <table class="rows" aria-label="What the identity can do">
        <thead>
          <tr>
            <th scope="col">Group</th>
            <th scope="col">Roles</th>
            <th scope="col">Capabilities</th>
          </tr>
        </thead>
        <tbody>
          {page.data.items.map((a) => (
            <tr key={a.groupUid}>
              <td>
                <NameOf kind="group" uid={a.groupUid} link={href('group', a.groupUid)} />
              </td>
              <td>
                {roleNames(a.bindings)}
                {(a.conditional ?? []).map((b) => (
                  <div key={b.bindingUid}>
                    {b.role.name || <NameOf kind="role" uid={b.role.uid} />}
                    <ConditionLine condition={b.when} />
                  </div>
                ))}
              </td>
              <td class="caps">{(a.effectiveCapabilities ?? a.capabilities).join(' ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** Holders, each with the grants through which it holds (a condition under its grant). */
function Holders({ label, holders }: { label: string; holders: Holder[] }) {
  return (
    <ul class="holders" aria-label={label}>
      {holders.map((h) => (
        <li key={h.identityUid}>
          <NameOf
            kind="identity"
            uid={h.identityUid}
            link={href('access', '', { identity: h.identityUid })}
          />
          {' through '}
          {h.grants.map((g, i) => (
            <span key={g.bindingUid}>
              {i > 0 ? '; ' : ''}
              {g.role.name || <NameOf kind="role" uid={g.role.uid} />} at{' '}
              <NameOf kind="group" uid={g.groupUid} />
              <ConditionLine condition={g.when} />
            </span>
          ))}
        </li>
      ))}
    </ul>
  );
}

interface WhoCanAnswer {
  identities?: Holder[];
  conditionalHolders?: Holder[];
}

function WhoCan({ group, capability }: { group: string; capability: string }) {
  const page = useLoad<WhoCanAnswer | undefined>(
    () =>
      group && capability
        ? get<WhoCanAnswer>(
            withQuery('/iam/v2beta1/access:whoCan', { group, capability, page_size: 50 }),
          )
        : Promise.resolve(undefined),
    [group, capability],
  );
  if (!group || !capability) return null;
  if (page.error) return <ErrorBox error={page.error} />;
  if (!page.data) return null;
  const holders = page.data.identities ?? [];
  const conditional = page.data.conditionalHolders ?? [];
  return (
    <>
      {holders.length === 0 ? (
        <p role="status">No one holds {capability} here by a binding you can see.</p>
      ) : (
        <Holders label="Who can" holders={holders} />
      )}
      {conditional.length > 0 ? (
        <>
          <p>Only where a condition holds:</p>
          <Holders label="Who can where a condition holds" holders={conditional} />
        </>
      ) : null}
    </>
  );
}

function Check(props: { identity?: Picked; group?: Picked; capability?: Picked }) {
  const [identity, setIdentity] = useState(props.identity);
  const [capability, setCapability] = useState(props.capability);
  const [group, setGroup] = useState(props.group);
  const [result, setResult] = useState<CheckResult | undefined>(undefined);
  const act = useAction();
  return (
    <Section id="check-h" title="Check, with the reason">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!identity || !capability || !group) return;
          void act.run(async () => {
            setResult(undefined);
            setResult(
              await post<CheckResult>('/iam/v2beta1/access:check', {
                identityUid: identity.uid,
                capability: capability.uid,
                groupUid: group.uid,
              }),
            );
          });
        }}
      >
        <Picker
          kind="identity"
          label="Identity"
          name="check-identity"
          value={identity}
          onPick={setIdentity}
          required
        />
        <Picker
          kind="capability"
          label="Capability"
          name="check-capability"
          value={capability}
          onPick={setCapability}
          required
        />
        <Picker
          kind="group"
          label="Group"
          name="check-group"
          value={group}
          onPick={setGroup}
          required
        />
        <button type="submit" disabled={act.busy || !identity || !capability || !group}>
          Check
        </button>
      </form>
      <ErrorBox error={act.error} />
      {result && identity && group ? (
        <CheckAnswer result={result} identityName={identity.name} groupName={group.name} />
      ) : null}
    </Section>
  );
}

/**
 * The access inspector: what an identity can do, who can do something at a group, and a
 * check that says why. Everything is chosen by name; the address keeps the uids, so a view
 * can be linked to.
 */
export function AccessView({ query }: { query: URLSearchParams }) {
  const identityUid = query.get('identity') ?? '';
  const groupUid = query.get('group') ?? '';
  const capabilityName = query.get('capability') ?? '';
  const [identity] = usePicked('identity', identityUid);
  const [group] = usePicked('group', groupUid);
  const [capability] = usePicked('capability', capabilityName);
  const auditReadable = useAuditReadable();
  const to = (q: Record<string, string | undefined>) =>
    go(
      href('access', '', {
        identity: identityUid,
        group: groupUid,
        capability: capabilityName,
        ...q,
      }),
    );
  return (
    <div>
      <h1>Access</h1>
      <Section id="whatcan-h" title="What can an identity do?">
        <Picker
          kind="identity"
          label="Identity"
          name="identity"
          value={identity}
          onPick={(p) => p && to({ identity: p.uid })}
        />
        {identityUid ? (
          <p>
            <a href={href('identity', identityUid)}>The identity’s page</a>
            {auditReadable ? (
              <>
                {' · '}
                <a href={href('audit', '', { actor: identityUid })}>What this identity changed</a>
              </>
            ) : null}
          </p>
        ) : null}
        <WhatCan identity={identityUid} />
      </Section>
      <Section id="whocan-h" title="Who can do this here?">
        <Picker
          kind="group"
          label="Group"
          name="group"
          value={group}
          onPick={(p) => p && to({ group: p.uid })}
        />
        <Picker
          kind="capability"
          label="Capability"
          name="capability"
          value={capability}
          onPick={(p) => p && to({ capability: p.uid })}
        />
        <WhoCan group={groupUid} capability={capabilityName} />
      </Section>
      <Check
        key={`${identity?.name}|${group?.name}|${capabilityName}`}
        identity={identity}
        group={group}
        capability={capability}
      />
    </div>
  );
}
