import { get } from '../api';
import { CanContext, GROUP_PAGE_CAPABILITIES, usePermissions } from '../can';
import { kindOf, type Group } from '../model';
import { groupHref, href } from '../route';
import { CopyUid, ErrorBox, useLoad, useTitle } from '../ui';
import { GroupActions } from './group-actions';
import { TABS, TabPanel, tabOf } from './group-tabs';
import { Breadcrumbs } from './tree';

/**
 * One page per group (`#/groups/<uid>/<tab>`): breadcrumbs, its name, what may be done to
 * it, and a tab per kind of thing under it, each tab its own address. One batch check
 * decides which actions every tab offers.
 */
export function GroupView({ uid, tab }: { uid: string; tab: string }) {
  const group = useLoad(() => get<Group>(`/iam/v2beta1/groups/${uid}`), [uid]);
  const can = usePermissions(uid, GROUP_PAGE_CAPABILITIES);
  const current = tabOf(tab);
  // The previous group's answer is never shown under this uid.
  const g = group.data?.uid === uid ? group.data : undefined;
  useTitle(g ? `${g.name} · ${current.label}` : undefined);
  if (!uid)
    return (
      <p>
        Choose a group in the <a href={href('tree')}>tree</a>.
      </p>
    );
  return (
    <div>
      <Breadcrumbs uid={uid} />
      {/* Never the raw uid: a neutral heading while the name loads. */}
      <h1 tabIndex={-1} aria-busy={g ? undefined : 'true'}>
        {g ? g.name : group.error ? 'Group' : 'Loading…'}
      </h1>
      <ErrorBox error={group.error} />
      {g ? (
        <p class="meta">
          <span class="kind">{kindOf(uid)}</span> <span class="description">{g.description}</span>{' '}
          <CopyUid uid={uid} label={g.name} />
        </p>
      ) : null}
      {g && can ? <GroupActions group={g} can={can} onRenamed={group.reload} /> : null}
      <nav aria-label="Group sections" class="tabs">
        <ul>
          {TABS.map((t) => (
            <li key={t.id}>
              <a
                href={groupHref(uid, t.id)}
                aria-current={t.id === current.id ? 'page' : undefined}
              >
                {t.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {can ? (
        <CanContext.Provider value={can}>
          <TabPanel key={current.id} tab={current.id} uid={uid} name={g?.name ?? ''} />
        </CanContext.Provider>
      ) : (
        <p role="status">Loading…</p>
      )}
    </div>
  );
}
