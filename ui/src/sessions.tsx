/**
 * The sessions screen: every session the daemon knows, most recently updated first, with
 * its status, agent, model and what waits in it; paged, and refreshed every few seconds
 * while the tab is visible.
 */

import { useEffect, useState } from 'preact/hooks';
import type { SessionInfo, SessionStatus } from './api.js';
import { isAbort } from './api.js';
import { useApp } from './context.js';
import { ago } from './format.js';
import { follow, href } from './router.js';

/** Sessions per page. */
const PAGE = 25;
/** The most sessions read from the daemon for one listing (1,000 a request). */
const MOST = 10_000;
/** How often the listing is read again while the tab is visible. */
const REFRESH_MS = 5_000;

function Waiting({ session }: { session: SessionInfo }) {
  const parts: string[] = [];
  const calls = session.pendingToolCalls ?? [];
  if (session.pendingPermissions.length) parts.push(`${session.pendingPermissions.length} permission${session.pendingPermissions.length > 1 ? 's' : ''}`);
  if (session.pendingQuestions.length) parts.push(`${session.pendingQuestions.length} question${session.pendingQuestions.length > 1 ? 's' : ''}`);
  if (calls.length) parts.push(`${calls.length} tool call${calls.length > 1 ? 's' : ''}`);
  return parts.length ? <span class="badge waiting">{parts.join(', ')}</span> : <span class="muted">—</span>;
}

/** The sessions screen. */
export function SessionsPage() {
  const { daemon, report } = useApp();
  const [sessions, setSessions] = useState<SessionInfo[] | undefined>();
  const [truncated, setTruncated] = useState(false);
  const [status, setStatus] = useState<SessionStatus | ''>('');
  const [page, setPage] = useState(0);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    const controller = new AbortController();
    (async () => {
      const all: SessionInfo[] = [];
      let cursor: string | undefined;
      do {
        const answer = await daemon.listSessions(
          { limit: 1000, cursor, status: status || undefined },
          { signal: controller.signal },
        );
        all.push(...answer.sessions);
        cursor = answer.nextCursor ?? undefined;
      } while (cursor && all.length < MOST);
      all.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.createdAt.localeCompare(a.createdAt));
      setSessions(all);
      setTruncated(cursor !== undefined);
    })().catch((e) => {
      if (!isAbort(e)) report(e);
    });
    return () => controller.abort();
  }, [daemon, status, tick]);

  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') setTick((t) => t + 1);
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  const pages = Math.max(1, Math.ceil((sessions?.length ?? 0) / PAGE));
  const shown = Math.min(page, pages - 1);
  const rows = sessions?.slice(shown * PAGE, shown * PAGE + PAGE) ?? [];
  return (
    <main id="main">
      <div class="title-row">
        <h1>Sessions</h1>
        <a class="button primary" href={href({ name: 'new' })} onClick={follow}>
          New session
        </a>
      </div>
      <div class="toolbar">
        <label for="status-filter">Status</label>{' '}
        <select
          id="status-filter"
          value={status}
          onChange={(e) => {
            setStatus((e.currentTarget as HTMLSelectElement).value as SessionStatus | '');
            setPage(0);
          }}
        >
          <option value="">any</option>
          <option value="running">running</option>
          <option value="idle">idle</option>
          <option value="ended">ended</option>
        </select>
      </div>
      {sessions === undefined ? (
        <p class="muted">Loading…</p>
      ) : sessions.length === 0 ? (
        <p>
          No sessions yet. <a href={href({ name: 'new' })} onClick={follow}>Start one</a>.
        </p>
      ) : (
        <>
          <div class="table-scroll">
            <table class="sessions">
              <thead>
                <tr>
                  <th scope="col">Session</th>
                  <th scope="col">Status</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Model</th>
                  <th scope="col">Waiting</th>
                  <th scope="col">Events</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((s) => (
                  <tr key={s.sessionId}>
                    <th scope="row">
                      <a href={href({ name: 'session', id: s.sessionId })} onClick={follow}>
                        {s.sessionId}
                      </a>
                    </th>
                    <td>
                      <span class={`badge session-${s.status}`}>{s.status}</span>
                    </td>
                    <td>{s.agent}</td>
                    <td>{s.model ?? <span class="muted">default</span>}</td>
                    <td>
                      <Waiting session={s} />
                    </td>
                    <td>{s.eventCount}</td>
                    <td>
                      <time dateTime={s.updatedAt} title={s.updatedAt}>
                        {ago(s.updatedAt)}
                      </time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Pages">
            <button type="button" disabled={shown === 0} onClick={() => setPage(shown - 1)}>
              Previous
            </button>
            <span>
              Page {shown + 1} of {pages} · {sessions.length} session{sessions.length === 1 ? '' : 's'}
              {truncated ? ` (the first ${MOST} only)` : ''}
            </span>
            <button type="button" disabled={shown >= pages - 1} onClick={() => setPage(shown + 1)}>
              Next
            </button>
          </nav>
        </>
      )}
    </main>
  );
}
