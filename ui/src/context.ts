/** What every screen shares: the daemon client, and a way to report what went wrong. */

import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import type { AgentInfo, SandboxDaemon } from './api.js';
import { isAbort } from './api.js';

/** The app's shared state. */
export interface AppContext {
  /** The client of the daemon that served the page, with this tab's token. */
  daemon: SandboxDaemon;
  /** Shows an error to the user (an unauthorized one asks for the token again). */
  report: (error: unknown) => void;
}

/** The context the app provides. */
export const App = createContext<AppContext | undefined>(undefined);

/** The app's shared state (inside `<App.Provider>`). */
export function useApp(): AppContext {
  const app = useContext(App);
  if (!app) throw new Error('useApp outside the app');
  return app;
}

/**
 * The daemon's agents (`GET /agents`), read again whenever `version` changes; `undefined`
 * until the first answer. A failure is reported.
 */
export function useAgents(version: number = 0): AgentInfo[] | undefined {
  const { daemon, report } = useApp();
  const [agents, setAgents] = useState<AgentInfo[] | undefined>();
  useEffect(() => {
    const controller = new AbortController();
    daemon.listAgents({ signal: controller.signal }).then(
      (answer) => setAgents(answer.agents),
      (e) => isAbort(e) || report(e),
    );
    return () => controller.abort();
  }, [daemon, version]);
  return agents;
}

/**
 * A user action against the daemon: `busy` while it runs; a failure is reported and frees
 * the controls again (on success they stay busy: the event that follows removes them).
 */
export function useAction(): [boolean, (action: () => Promise<unknown>) => Promise<void>] {
  const { report } = useApp();
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await action();
    } catch (e) {
      report(e);
      setBusy(false);
    }
  };
  return [busy, run];
}
