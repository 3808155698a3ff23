import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, onSignedOut } from './api';
import { useAuditReadable } from './can';
import {
  CALLBACK_PATH,
  clearToken,
  finishLogin,
  getToken,
  refusalNotice,
  takeTokenFromAddress,
  tokenActor,
  tokenSubject,
} from './auth';
import type { Identity } from './model';
import { href, useRoute, type Route } from './route';
import { ErrorBox, NameOf, useLoad, useTitle } from './ui';
import { AccessView } from './views/access';
import { AuditView } from './views/audit';
import { IdentitiesView } from './views/identities';
import { IdentityView } from './views/identity';
import { RolesView } from './views/roles';
import { BuilderView } from './views/builder';
import { ConditionsView } from './views/conditions';
import { SessionsView } from './views/sessions';
import { FindingsView } from './views/findings';
import { GroupView } from './views/group';
import { RequestsView } from './views/requests';
import { SignIn } from './views/sign-in';
import { TreeView } from './views/tree';
import routes from './routes.json';

/** One view of the router's table (routes.json), which the browser tests visit whole. */
interface ViewEntry {
  view: string;
  label: string;
  nav?: boolean;
  arg?: string;
  needs?: 'audit';
}
const VIEWS: ViewEntry[] = routes.views as ViewEntry[];
const NAV = VIEWS.filter((v) => v.nav === true);

/** The nav item a view belongs to: every group page is part of the tree. */
function navOf(view: string): string {
  return view === 'groups' || view === 'group' ? 'tree' : view;
}

/** What each view of the table shows; a view the table does not name is the tree. */
const PAGES: Record<string, (route: Route, place: string) => preact.JSX.Element> = {
  groups: (r) => <GroupView key={`group/${r.arg}`} uid={r.arg} tab={r.tab} />,
  identities: (r, place) => <IdentitiesView key={place} query={r.query} />,
  identity: (r) => <IdentityView key={`identity/${r.arg}`} uid={r.arg} />,
  roles: (r, place) => <RolesView key={place} query={r.query} />,
  access: (r, place) => <AccessView key={place} query={r.query} />,
  builder: (r, place) => <BuilderView key={place} groupUid={r.arg} />,
  audit: (r, place) => <AuditView key={place} query={r.query} />,
  requests: (r, place) => <RequestsView key={place} query={r.query} />,
  unused: (r, place) => <FindingsView key={place} query={r.query} />,
  conditions: (_r, place) => <ConditionsView key={place} />,
  sessions: (_r, place) => <SessionsView key={place} />,
};

function View({ route }: { route: Route }) {
  // A view is remade for each place: no state (page tokens, a form's values) carries over
  // from one group or identity to another. A group page stays one page across its tabs.
  const place = `${route.view}/${route.arg}?${route.query.toString()}`;
  const label = VIEWS.find((v) => v.view === navOf(route.view))?.label;
  // A group page names itself once its name is in (GroupView).
  const groupPage = navOf(route.view) === 'tree' && route.arg !== '';
  useTitle(groupPage ? undefined : label);
  // `#/group/<uid>` (older links) is the group page.
  const view = route.view === 'group' ? 'groups' : route.view;
  const page = VIEWS.some((v) => v.view === view) ? PAGES[view] : undefined;
  if (page) return page(route, place);
  // `#/tree/<uid>`, the old address of a group, is its group page.
  return route.arg ? (
    <GroupView key={`group/${route.arg}`} uid={route.arg} tab="children" />
  ) : (
    <TreeView key={place} />
  );
}

/** "Signed in as <name>", or the admin token, which is no identity. */
function Who() {
  const token = getToken() ?? '';
  const sub = tokenSubject(token);
  const me = useLoad(
    () => (sub ? get<Identity>(`/iam/v2beta1/identities/${sub}`) : Promise.resolve(undefined)),
    [sub],
  );
  if (!sub) return <>Signed in with the admin token</>;
  const actor = tokenActor(token);
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
      {actor ? (
        <>
          , through <NameOf kind="identity" uid={actor} link="" />
        </>
      ) : null}
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
  const auditReadable = useAuditReadable();
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
            {NAV.filter((v) => v.needs !== 'audit' || auditReadable).map(({ view, label }) => (
              <li key={view}>
                <a href={href(view)} aria-current={current === view ? 'page' : undefined}>
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
  // Why the sign-in page is shown, when it is not the first visit: a link that is stale or
  // expired, or a token the server stopped accepting.
  const [notice, setNotice] = useState<string | undefined>(linkNotice);
  useEffect(
    () =>
      onSignedOut((refused) => {
        setNotice(refusalNotice(refused));
        setSignedIn(false);
      }),
    [],
  );
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
        <SignIn
          notice={notice}
          onSignedIn={() => {
            setNotice(undefined);
            setSignedIn(true);
          }}
        />
      </>
    );
  return (
    <Shell
      onSignOut={() => {
        clearToken();
        setNotice(undefined);
        setSignedIn(false);
      }}
    />
  );
}

const linkNotice = takeTokenFromAddress();
render(<App />, document.getElementById('app')!);
