import { useState } from 'preact/hooks';
import { get } from '../api';
import { clearToken, loginConfiguration, setToken, startLogin } from '../auth';
import { ErrorBox, useAction } from '../ui';

/** Sign in through the server's login provider, or paste an API token (development). */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setTokenText] = useState('');
  const paste = useAction();
  const oidc = useAction();
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Arbor</h1>
      <section aria-labelledby="sso-h" class="panel">
        <h2 id="sso-h">With your login provider</h2>
        <p>
          Signs you in at the provider this server names, then trades the ID token for an API token
          of your own identity.
        </p>
        <button
          type="button"
          disabled={oidc.busy}
          onClick={() => void oidc.run(async () => startLogin(await loginConfiguration()))}
        >
          Sign in with the login provider
        </button>
        <ErrorBox error={oidc.error} />
      </section>
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
          <label class="field">
            <span>API token</span>
            <textarea
              name="token"
              rows={3}
              autoComplete="off"
              spellcheck={false}
              value={token}
              onInput={(e) => setTokenText((e.currentTarget as HTMLTextAreaElement).value)}
            />
          </label>
          <button type="submit" disabled={paste.busy || token.trim() === ''}>
            Sign in with this token
          </button>
        </form>
        <ErrorBox error={paste.error} />
        <p class="hint">The token is kept in this tab only (sessionStorage), never in a cookie.</p>
      </section>
    </main>
  );
}
