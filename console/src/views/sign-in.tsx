import { useState } from 'preact/hooks';
import { get } from '../api';
import { clearToken, loginConfiguration, setToken, startLogin } from '../auth';
import { ErrorBox, useAction, useLoad, useTitle } from '../ui';

/** Sign in through the server's login provider (when it names one), or paste an API token. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string }) {
  useTitle('Sign in');
  // The provider button is offered only when the server publishes a provider.
  const config = useLoad(() => loginConfiguration().catch(() => undefined), []);
  const provider = config.data?.issuer && config.data.clientId ? config.data : undefined;
  const oidc = useAction();
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Arbor</h1>
      {notice ? (
        <p class="notice" role="alert">
          {notice}
        </p>
      ) : null}
      {provider ? (
        <section aria-labelledby="sso-h" class="panel">
          <h2 id="sso-h">With your login provider</h2>
          <p>
            Signs you in at <code>{provider.issuer}</code>, then trades the ID token for an API
            token of your own identity.
          </p>
          <button
            type="button"
            disabled={oidc.busy}
            onClick={() => void oidc.run(() => startLogin(provider))}
          >
            Sign in with the login provider
          </button>
          <ErrorBox error={oidc.error} />
        </section>
      ) : null}
      <PasteToken onSignedIn={onSignedIn} />
    </main>
  );
}

function PasteToken({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setTokenText] = useState('');
  const paste = useAction();
  return (
    <section aria-labelledby="paste-h" class="panel">
      <h2 id="paste-h">With a token</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void paste.run(async () => {
            setToken(token);
            try {
              // Any authenticated read proves the token; a refusal is shown as worded.
              await get('/iam/v2beta1/roles?page_size=1');
            } catch (err) {
              clearToken();
              throw err;
            }
            onSignedIn();
          });
        }}
      >
        <label class="field wide">
          <span>API token</span>
          <textarea
            name="token"
            rows={3}
            autoComplete="off"
            spellcheck={false}
            aria-describedby="token-hint"
            value={token}
            onInput={(e) => setTokenText((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" disabled={paste.busy || token.trim() === ''}>
          Sign in with this token
        </button>
      </form>
      <ErrorBox error={paste.error} />
      <div id="token-hint" class="hint">
        <p>Where a token comes from:</p>
        <ul>
          <li>
            a development run of <code>npm start</code> prints a line{' '}
            <code>Sign in: open …/console/#token=…</code>: open that address, or paste the part
            after <code>#token=</code> here;
          </li>
          <li>
            <code>arbor auth token</code> prints the token of your CLI session;
          </li>
          <li>the administrator token of the server (ARBOR_ADMIN_TOKEN).</li>
        </ul>
        <p>The token is kept in this tab only (sessionStorage), never in a cookie.</p>
      </div>
    </section>
  );
}
