import { useState } from 'preact/hooks';
import { listPage, post, type Page } from '../api';
import type { Named } from '../model';
import { go, href } from '../route';
import { ErrorBox, Field, Section, Uid, useAction, useLoad } from '../ui';

interface GroupAccess {
  groupUid: string;
  bindings: Array<{ bindingUid: string; role: Named }>;
  capabilities: string[];
  effectiveCapabilities?: string[];
}
interface Grant {
  bindingUid: string;
  role: Named;
  groupUid: string;
  path: string[];
}
interface Holder {
  identityUid: string;
  grants: Grant[];
}
interface CheckResult {
  allowed: boolean;
  grants: Grant[];
}

function Grants({ grants }: { grants: Grant[] }) {
  return (
    <ul class="grants">
      {grants.map((g) => (
        <li key={g.bindingUid}>
          role <strong>{g.role.name || g.role.uid}</strong> bound at{' '}
          <a href={href('tree', g.groupUid)}>
            <Uid uid={g.groupUid} />
          </a>{' '}
          by binding <Uid uid={g.bindingUid} />
          {g.path.length > 1 ? <> (down through {g.path.length - 1} level(s))</> : null}
        </li>
      ))}
    </ul>
  );
}

/** What an identity can do, where, and through which bindings (`access:whatCan`). */
function WhatCan({ identity }: { identity: string }) {
  const page = useLoad<Page<GroupAccess> | undefined>(
    () =>
      identity
        ? listPage<GroupAccess>('/iam/v2beta1/access:whatCan', 'groups', {
            identity,
            page_size: 50,
          })
        : Promise.resolve(undefined),
    [identity],
  );
  if (!identity) return null;
  return (
    <div>
      <ErrorBox error={page.error} />
      {page.data ? (
        page.data.items.length === 0 ? (
          <p role="status">This identity can do nothing you can see.</p>
        ) : (
          <table class="rows" aria-label="What the identity can do">
            <thead>
              <tr>
                <th scope="col">Group</th>
                <th scope="col">Bound roles</th>
                <th scope="col">Capabilities</th>
              </tr>
            </thead>
            <tbody>
              {page.data.items.map((a) => (
                <tr key={a.groupUid}>
                  <td>
                    <a href={href('tree', a.groupUid)}>
                      <Uid uid={a.groupUid} />
                    </a>
                  </td>
                  <td>{a.bindings.map((b) => b.role.name || b.role.uid).join(', ')}</td>
                  <td class="caps">{(a.effectiveCapabilities ?? a.capabilities).join(' ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </div>
  );
}

function WhoCan({ group, capability }: { group: string; capability: string }) {
  const page = useLoad<Page<Holder> | undefined>(
    () =>
      group && capability
        ? listPage<Holder>('/iam/v2beta1/access:whoCan', 'identities', {
            group,
            capability,
            page_size: 50,
          })
        : Promise.resolve(undefined),
    [group, capability],
  );
  if (!group || !capability) return null;
  return (
    <div>
      <ErrorBox error={page.error} />
      {page.data ? (
        <ul class="holders" aria-label="Who can">
          {page.data.items.map((h) => (
            <li key={h.identityUid}>
              <a href={href('access', '', { identity: h.identityUid })}>
                <Uid uid={h.identityUid} />
              </a>
              <Grants grants={h.grants} />
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function Check() {
  const [identityUid, setIdentity] = useState('');
  const [capability, setCapability] = useState('');
  const [groupUid, setGroup] = useState('');
  const [result, setResult] = useState<CheckResult | undefined>(undefined);
  const act = useAction();
  return (
    <Section id="check-h" title="Check, with proof">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void act.run(async () => {
            setResult(undefined);
            setResult(
              await post<CheckResult>('/iam/v2beta1/access:check', {
                identityUid,
                capability,
                groupUid,
              }),
            );
          });
        }}
      >
        <Field
          label="Identity uid"
          name="check-identity"
          value={identityUid}
          onInput={setIdentity}
          required
        />
        <Field
          label="Capability"
          name="check-capability"
          value={capability}
          onInput={setCapability}
          placeholder="groups.list"
          required
        />
        <Field label="Group uid" name="check-group" value={groupUid} onInput={setGroup} required />
        <button type="submit" disabled={act.busy}>
          Check
        </button>
      </form>
      <ErrorBox error={act.error} />
      {result ? (
        <div role="status">
          <p class={result.allowed ? 'allowed' : 'denied'}>
            {result.allowed ? 'Allowed' : 'Denied'}
          </p>
          <Grants grants={result.grants} />
        </div>
      ) : null}
    </Section>
  );
}

/** The access inspector: what-can for an identity, who-can for a group, a check with proof. */
export function AccessView({ query }: { query: URLSearchParams }) {
  const identity = query.get('identity') ?? '';
  const group = query.get('group') ?? '';
  const capability = query.get('capability') ?? '';
  const [idText, setIdText] = useState(identity);
  const [groupText, setGroupText] = useState(group);
  const [capText, setCapText] = useState(capability);
  return (
    <div>
      <h1>Access</h1>
      <Section id="whatcan-h" title="What can an identity do?">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            go(href('access', '', { identity: idText, group, capability }));
          }}
        >
          <Field label="Identity uid" name="identity" value={idText} onInput={setIdText} required />
          <button type="submit">Show</button>
        </form>
        {identity ? (
          <p>
            <a href={href('audit', '', { resource: identity })}>Audit of this identity</a>
          </p>
        ) : null}
        <WhatCan identity={identity} />
      </Section>
      <Section id="whocan-h" title="Who can do this here?">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            go(href('access', '', { identity, group: groupText, capability: capText }));
          }}
        >
          <Field label="Group uid" name="group" value={groupText} onInput={setGroupText} required />
          <Field
            label="Capability"
            name="capability"
            value={capText}
            onInput={setCapText}
            placeholder="groups.list"
            required
          />
          <button type="submit">Show</button>
        </form>
        <WhoCan group={group} capability={capability} />
      </Section>
      <Check />
    </div>
  );
}
