/** Asks for the daemon's token, once per tab: it is kept in `sessionStorage` only. */

import { useState } from 'preact/hooks';

/** The token form; `refused` when the last token tried was wrong. */
export function TokenPage({ refused, onToken }: { refused: boolean; onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <main id="main" class="narrow">
      <h1>Connect to the daemon</h1>
      <p>
        This daemon needs its token (<code>SANDBOX_DAEMON_TOKEN</code>, or the file given with{' '}
        <code>--token-file</code>). It is kept in this tab's session storage only, and sent as an{' '}
        <code>Authorization</code> header: never in a URL or a cookie.
      </p>
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim()) onToken(token.trim());
        }}
      >
        <div class="field">
          <label for="token">Token</label>
          <input
            id="token"
            type="password"
            autocomplete="off"
            required
            value={token}
            aria-describedby={refused ? 'token-refused' : undefined}
            onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        {refused && (
          <p id="token-refused" class="error-text" role="alert">
            The daemon refused that token.
          </p>
        )}
        <div class="actions">
          <button type="submit" class="primary">
            Connect
          </button>
        </div>
      </form>
    </main>
  );
}
