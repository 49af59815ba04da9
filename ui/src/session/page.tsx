/**
 * A session's screen (`/ui/sessions/{id}`): its transcript, rendered from the event log and
 * following it live over SSE (the SDK's lossless stream: `fetch` with the token in a header,
 * resumed with `Last-Event-ID` after a dropped connection); the tray of what waits; the
 * composer with Cancel and End; and the raw events (`includeRaw`). A reload reads the log
 * from its start again, so nothing is shown twice or missed.
 */

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { SessionInfo } from '../api.js';
import { ProblemError, describe, isAbort } from '../api.js';
import { useApp } from '../context.js';
import { ago, pretty } from '../format.js';
import { href, follow } from '../router.js';
import { EntryView } from './items.js';
import { Tray } from './tray.js';
import { Transcript } from './transcript.js';

/** Re-renders at most once a frame while events pour in. */
function useFrameRefresh(): [number, () => void] {
  const [version, setVersion] = useState(0);
  const pending = useRef(false);
  const refresh = () => {
    if (pending.current) return;
    pending.current = true;
    const run = () => {
      if (!pending.current) return;
      pending.current = false;
      setVersion((v) => v + 1);
    };
    requestAnimationFrame(run);
    setTimeout(run, 100); // Background tabs get no frames.
  };
  return [version, refresh];
}

type StreamState = { state: 'loading' } | { state: 'live' } | { state: 'done' } | { state: 'failed'; message: string };

function Composer({ sessionId, running, ended }: { sessionId: string; running: boolean; ended: boolean }) {
  const { daemon, report } = useApp();
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const send = async (event?: Event) => {
    event?.preventDefault();
    const message = text.trim();
    if (!message || sending) return;
    setSending(true);
    try {
      await daemon.sendMessage(sessionId, { message });
      setText('');
    } catch (e) {
      report(e);
    } finally {
      setSending(false);
    }
  };
  const act = async (action: () => Promise<unknown>) => {
    try {
      await action();
    } catch (e) {
      report(e);
    }
  };
  return (
    <form class="composer" aria-label="Composer" onSubmit={send}>
      <label for="message" class="visually-hidden">
        Message
      </label>
      <textarea
        id="message"
        rows={3}
        placeholder={ended ? 'The session has ended.' : 'Message the agent (Ctrl+Enter sends)'}
        disabled={ended}
        value={text}
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e);
        }}
      />
      <div class="actions">
        <button type="submit" class="primary" disabled={ended || sending || running || !text.trim()}>
          Send
        </button>
        <button type="button" disabled={!running} onClick={() => act(() => daemon.cancelTurn(sessionId))}>
          Cancel turn
        </button>
        <button
          type="button"
          class="danger"
          disabled={ended}
          onClick={() => {
            if (confirm(`End session ${sessionId}? Its log stays readable.`)) void act(() => daemon.endSession(sessionId));
          }}
        >
          End session
        </button>
      </div>
    </form>
  );
}

/** Raw events shown at first; the rest on demand (a long log would make a heavy page). */
const RAW_SHOWN = 2_000;

function RawEvents({ transcript }: { transcript: Transcript }) {
  const [all, setAll] = useState(false);
  const events = transcript.events;
  const from = all ? 0 : Math.max(0, events.length - RAW_SHOWN);
  return (
    <>
      {from > 0 && (
        <p class="muted">
          Showing the last {RAW_SHOWN} of {events.length} events.{' '}
          <button type="button" class="link" onClick={() => setAll(true)}>
            Show all
          </button>
        </p>
      )}
      <RawList events={from > 0 ? events.slice(from) : events} />
    </>
  );
}

function RawList({ events }: { events: Transcript['events'] }) {
  return (
    <ol class="raw-events" aria-label="Raw events">
      {events.map((event) => (
        <li key={event.sequence} data-sequence={event.sequence}>
          <details>
            <summary>
              <span class="seq">#{event.sequence}</span> <code>{event.type}</code>{' '}
              <span class="muted">{event.source}{event.synthetic ? ' · synthetic' : ''}</span>
            </summary>
            <pre>{pretty(event)}</pre>
          </details>
        </li>
      ))}
    </ol>
  );
}

function Header({ info, transcript, sessionId }: { info: SessionInfo | undefined; transcript: Transcript; sessionId: string }) {
  const status = transcript.ended ? 'ended' : transcript.currentTurn ? 'running' : (info?.status ?? 'idle');
  return (
    <header class="session-header">
      <h1>
        <a href={href({ name: 'sessions' })} onClick={follow}>
          Sessions
        </a>{' '}
        / <span class="session-id">{sessionId}</span>
      </h1>
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <span class={`badge session-${status}`} data-testid="session-status">
              {status}
            </span>
          </dd>
        </div>
        {info && (
          <>
            <div>
              <dt>Agent</dt>
              <dd>{info.agent}</dd>
            </div>
            <div>
              <dt>Model</dt>
              <dd>{info.model ?? 'default'}{info.variant ? ` (${info.variant})` : ''}</dd>
            </div>
            <div>
              <dt>Mode</dt>
              <dd>{info.agentMode ?? 'default'} · {info.permissionMode}</dd>
            </div>
            <div>
              <dt>Directory</dt>
              <dd>
                <code>{info.cwd}</code>
              </dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>{ago(info.createdAt)}</dd>
            </div>
          </>
        )}
        <div>
          <dt>Events</dt>
          <dd data-testid="event-count">{transcript.lastSequence}</dd>
        </div>
      </dl>
    </header>
  );
}

/** The screen of one session. */
export function SessionPage({ sessionId }: { sessionId: string }) {
  const { daemon, report } = useApp();
  const [raw, setRaw] = useState(false);
  const [info, setInfo] = useState<SessionInfo | undefined>();
  const [missing, setMissing] = useState(false);
  const [stream, setStream] = useState<StreamState>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const transcript = useRef(new Transcript());
  const [, refresh] = useFrameRefresh();
  const bottom = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    const controller = new AbortController();
    const fresh = new Transcript();
    transcript.current = fresh;
    setStream({ state: 'loading' });
    refresh();
    const load = async () => {
      try {
        setInfo(await daemon.getSession(sessionId, { signal: controller.signal }));
      } catch (e) {
        if (e instanceof ProblemError && e.status === 404) setMissing(true);
        else if (!isAbort(e)) report(e);
        return;
      }
      try {
        let first = true;
        for await (const event of daemon.events(sessionId, { includeRaw: raw, signal: controller.signal })) {
          if (first) {
            first = false;
            setStream({ state: 'live' });
          }
          fresh.apply(event);
          if (event.type === 'turnEnded' || event.type === 'sessionEnded' || event.type === 'turnStarted') {
            daemon.getSession(sessionId, { signal: controller.signal }).then(setInfo, () => undefined);
          }
          refresh();
        }
        setStream({ state: 'done' });
      } catch (e) {
        if (isAbort(e) || controller.signal.aborted) return;
        setStream({ state: 'failed', message: describe(e) });
      }
      refresh();
    };
    void load();
    return () => controller.abort();
  }, [daemon, sessionId, raw, attempt]);

  useEffect(() => {
    const onScroll = () => {
      stick.current = innerHeight + scrollY >= document.documentElement.scrollHeight - 80;
    };
    addEventListener('scroll', onScroll, { passive: true });
    return () => removeEventListener('scroll', onScroll);
  }, []);
  useLayoutEffect(() => {
    if (stick.current) bottom.current?.scrollIntoView({ block: 'end' });
  });

  if (missing) {
    return (
      <main id="main">
        <h1>No session {sessionId}</h1>
        <p>
          The daemon has no session of that id. <a href={href({ name: 'sessions' })} onClick={follow}>All sessions</a>
        </p>
      </main>
    );
  }
  const t = transcript.current;
  return (
    <main id="main" class="session">
      <Header info={info} transcript={t} sessionId={sessionId} />
      <div class="toolbar">
        <label>
          <input type="checkbox" checked={raw} onChange={(e) => setRaw((e.currentTarget as HTMLInputElement).checked)} /> Raw
          events (with each event's native JSON)
        </label>
        <span class="muted" role="status" data-testid="stream-state">
          {stream.state === 'loading' ? 'Loading…' : stream.state === 'live' ? 'Live' : stream.state === 'done' ? 'Complete' : ''}
        </span>
      </div>
      {stream.state === 'failed' && (
        <p role="alert" class="error-text">
          The event stream stopped: {stream.message}{' '}
          <button type="button" onClick={() => setAttempt((a) => a + 1)}>
            Reconnect
          </button>
        </p>
      )}
      <section class="transcript" aria-label="Transcript">
        {raw ? (
          <RawEvents transcript={t} />
        ) : (
          t.entries.map((entry) => <EntryView key={entry.sequence} entry={entry} transcript={t} sessionId={sessionId} />)
        )}
        {t.currentTurn && !t.ended && (
          <div class="working" role="status">
            The agent is working…
          </div>
        )}
      </section>
      <div class="dock">
        <Tray
          sessionId={sessionId}
          permissions={t.pendingPermissions()}
          questions={t.pendingQuestions()}
          toolCalls={t.pendingToolCalls()}
        />
        <Composer sessionId={sessionId} running={!!t.currentTurn && !t.ended} ended={t.ended} />
      </div>
      <div ref={bottom} />
    </main>
  );
}
