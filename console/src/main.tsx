import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { onSignedOut } from './api';
import {
  CALLBACK_PATH,
  clearToken,
  finishLogin,
  getToken,
  takeTokenFromAddress,
  tokenSubject,
} from './auth';
import { href, useRoute } from './route';
import { ErrorBox } from './ui';
import { AccessView } from './views/access';
import { AuditView } from './views/audit';
import { BuilderView } from './views/builder';
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
];

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const route = useRoute();
  const who = tokenSubject(getToken() ?? '');
  // A view is remade for each place: no state (page tokens, a form's values) carries over
  // from one group or identity to another.
  const place = `${route.view}/${route.arg}?${route.query.toString()}`;
  const view = (() => {
    switch (route.view) {
      case 'group':
        return <GroupView key={place} uid={route.arg} />;
      case 'access':
        return <AccessView key={place} query={route.query} />;
      case 'builder':
        return <BuilderView key={place} groupUid={route.arg} />;
      case 'audit':
        return <AuditView key={place} query={route.query} />;
      case 'requests':
        return <RequestsView key={place} query={route.query} />;
      default:
        return <TreeView key={place} uid={route.arg} query={route.query} />;
    }
  })();
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
                <a href={href(v)} aria-current={route.view === v ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          {who ? (
            <>
              Signed in as <code>{who}</code>
            </>
          ) : (
            'Signed in'
          )}{' '}
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {view}
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
