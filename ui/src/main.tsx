/**
 * The inspector's entry: connects to the daemon that served the page (asking for its token
 * when it needs one), and shows the screen of the URL: sessions, a session, a new session,
 * or the agents.
 */

import { render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { connect, describe, isUnauthorized, storedToken, storeToken } from './api.js';
import { AgentsPage } from './agents.js';
import { App, type AppContext } from './context.js';
import { NewSessionPage } from './new-session.js';
import { follow, href, useRoute, type Route } from './router.js';
import { SessionPage } from './session/page.js';
import { SessionsPage } from './sessions.js';
import { TokenPage } from './token.js';

type Auth = 'checking' | 'ok' | 'needToken' | 'refused' | { unreachable: string };

interface Notice {
  id: number;
  text: string;
}

function Nav({ route, version, hasToken, onForget }: { route: Route; version: string; hasToken: boolean; onForget: () => void }) {
  const link = (to: Route, label: string) => (
    <a href={href(to)} onClick={follow} aria-current={route.name === to.name ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <header class="top">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <span class="brand">sandbox-daemon</span>
      <nav aria-label="Main">
        {link({ name: 'sessions' }, 'Sessions')}
        {link({ name: 'new' }, 'New session')}
        {link({ name: 'agents' }, 'Agents')}
      </nav>
      <span class="spacer" />
      {version && <span class="muted">v{version}</span>}
      {hasToken && (
        <button type="button" class="link" onClick={onForget}>
          Forget token
        </button>
      )}
    </header>
  );
}

function Screen({ route }: { route: Route }) {
  switch (route.name) {
    case 'sessions':
      return <SessionsPage />;
    case 'session':
      return <SessionPage key={route.id} sessionId={route.id} />;
    case 'new':
      return <NewSessionPage />;
    case 'agents':
      return <AgentsPage />;
    case 'notFound':
      return (
        <main id="main">
          <h1>Not found</h1>
          <p>
            Nothing lives at <code>{route.path}</code>. <a href={href({ name: 'sessions' })} onClick={follow}>All sessions</a>
          </p>
        </main>
      );
  }
}

let noticeId = 0;

function Inspector() {
  const route = useRoute();
  const [token, setToken] = useState(storedToken);
  const daemon = useMemo(() => connect(token), [token]);
  const [auth, setAuth] = useState<Auth>('checking');
  const [version, setVersion] = useState('');
  const [notices, setNotices] = useState<Notice[]>([]);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    setAuth('checking');
    daemon.health({ signal: controller.signal }).then((h) => setVersion(h.version), () => undefined);
    daemon.listAgents({ signal: controller.signal }).then(
      () => setAuth('ok'),
      (e) => {
        if (controller.signal.aborted) return;
        if (isUnauthorized(e)) setAuth(token ? 'refused' : 'needToken');
        else setAuth({ unreachable: describe(e) });
      },
    );
    return () => controller.abort();
  }, [daemon, attempt]);

  const report = useCallback(
    (error: unknown) => {
      if (isUnauthorized(error)) {
        setAuth('refused');
        return;
      }
      const notice = { id: ++noticeId, text: describe(error) };
      setNotices((all) => [...all.slice(-4), notice]);
      setTimeout(() => setNotices((all) => all.filter((n) => n.id !== notice.id)), 15_000);
    },
    [],
  );
  const context = useMemo<AppContext>(() => ({ daemon, report }), [daemon, report]);
  const useToken = (next: string | undefined) => {
    storeToken(next);
    setToken(next);
  };

  let body;
  if (auth === 'checking') body = <main id="main"><p class="muted">Connecting…</p></main>;
  else if (auth === 'needToken' || auth === 'refused') body = <TokenPage refused={auth === 'refused'} onToken={useToken} />;
  else if (typeof auth === 'object') {
    body = (
      <main id="main">
        <h1>The daemon does not answer</h1>
        <p class="error-text">{auth.unreachable}</p>
        <button type="button" onClick={() => setAttempt((a) => a + 1)}>
          Try again
        </button>
      </main>
    );
  } else body = <Screen route={route} />;

  return (
    <App.Provider value={context}>
      <Nav route={route} version={version} hasToken={token !== undefined} onForget={() => useToken(undefined)} />
      {body}
      <div class="notices" aria-live="assertive">
        {notices.map((n) => (
          <div key={n.id} class="notice" role="alert">
            <span>{n.text}</span>
            <button type="button" aria-label="Dismiss" onClick={() => setNotices((all) => all.filter((x) => x.id !== n.id))}>
              ×
            </button>
          </div>
        ))}
      </div>
    </App.Provider>
  );
}

render(<Inspector />, document.getElementById('app')!);
