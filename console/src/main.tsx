import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, onSignedOut } from './api';
import {
  CALLBACK_PATH,
  clearToken,
  finishLogin,
  getToken,
  takeTokenFromAddress,
  tokenSubject,
} from './auth';
import type { Identity } from './model';
import { href, useRoute, type Route } from './route';
import { ErrorBox, useLoad, useTitle } from './ui';
import { AccessView } from './views/access';
import { AuditView } from './views/audit';
import { BuilderView } from './views/builder';
import { FindingsView } from './views/findings';
import { GroupView } from './views/group';
import { RequestsView } from './views/requests';
import { SignIn } from './views/sign-in';
import { TreeView } from './views/tree';

const NAV: Array<[string, string]> = [
  ['tree', 'Tree'],
  ['access', 'Access'],
  ['builder', 'Identity builder'],
  ['audit', 'Audit'],
  ['requests', 'Requests'],
  ['unused', 'Unused access'],
];

/** The nav item a view belongs to: every group page is part of the tree. */
function navOf(view: string): string {
  return view === 'groups' || view === 'group' ? 'tree' : view;
}

function View({ route }: { route: Route }) {
  // A view is remade for each place: no state (page tokens, a form's values) carries over
  // from one group or identity to another. A group page stays one page across its tabs.
  const place = `${route.view}/${route.arg}?${route.query.toString()}`;
  const label = NAV.find(([v]) => v === navOf(route.view))?.[1];
  // A group page names itself once its name is in (GroupView).
  const groupPage = navOf(route.view) === 'tree' && route.arg !== '';
  useTitle(groupPage ? undefined : label);
  switch (route.view) {
    case 'groups':
    case 'group':
      return <GroupView key={`group/${route.arg}`} uid={route.arg} tab={route.tab} />;
    case 'access':
      return <AccessView key={place} query={route.query} />;
    case 'builder':
      return <BuilderView key={place} groupUid={route.arg} />;
    case 'audit':
      return <AuditView key={place} query={route.query} />;
    case 'requests':
      return <RequestsView key={place} query={route.query} />;
    case 'unused':
      return <FindingsView key={place} query={route.query} />;
    default:
      // `#/tree/<uid>`, the old address of a group, is its group page.
      return route.arg ? (
        <GroupView key={`group/${route.arg}`} uid={route.arg} tab="children" />
      ) : (
        <TreeView key={place} />
      );
  }
}

/** "Signed in as <name>", or the admin token, which is no identity. */
function Who() {
  const sub = tokenSubject(getToken() ?? '');
  const me = useLoad(
    () => (sub ? get<Identity>(`/iam/v2beta1/identities/${sub}`) : Promise.resolve(undefined)),
    [sub],
  );
  if (!sub) return <>Signed in with the admin token</>;
  return (
    <>
      Signed in as{' '}
      {me.data ? (
        <strong>{me.data.name}</strong>
      ) : me.loading ? (
        '…'
      ) : (
        // An identity that may not read itself: the end of its uid, whole in the title.
        <code title={sub}>{sub.slice(-16)}</code>
      )}
    </>
  );
}

/** After every navigation the focus is on the new page's heading, not left on <body>. */
function useFocusHeading(hash: string): void {
  useEffect(() => {
    const h = document.querySelector<HTMLElement>('main h1');
    if (h) {
      if (!h.hasAttribute('tabindex')) h.tabIndex = -1;
      h.focus({ preventScroll: false });
    }
  }, [hash]);
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  useFocusHeading(`${route.view}/${route.arg}/${route.tab}?${route.query.toString()}`);
  const current = navOf(route.view);
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Arbor</span>
        <nav aria-label="Views">
          <ul>
            {NAV.map(([v, label]) => (
              <li key={v}>
                <a href={href(v)} aria-current={current === v ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          <Who />{' '}
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <View route={route} />
      </main>
    </>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(() => getToken() !== undefined);
  const [callbackError, setCallbackError] = useState<unknown>(undefined);
  const [finishing, setFinishing] = useState(() => location.pathname === CALLBACK_PATH);
  useEffect(() => onSignedOut(() => setSignedIn(false)), []);
  useEffect(() => {
    if (!finishing) return;
    const here = new URL(location.href);
    // The code and state leave the address bar (and history) at once.
    history.replaceState(null, '', '/console/');
    finishLogin(here).then(
      () => {
        setFinishing(false);
        setSignedIn(true);
      },
      (e: unknown) => {
        setFinishing(false);
        setCallbackError(e);
      },
    );
  }, [finishing]);
  if (finishing)
    return (
      <main id="main">
        <p role="status">Signing in…</p>
      </main>
    );
  if (!signedIn)
    return (
      <>
        <ErrorBox error={callbackError} />
        <SignIn onSignedIn={() => setSignedIn(true)} />
      </>
    );
  return (
    <Shell
      onSignOut={() => {
        clearToken();
        setSignedIn(false);
      }}
    />
  );
}

takeTokenFromAddress();
render(<App />, document.getElementById('app')!);
