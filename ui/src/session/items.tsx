/**
 * How each entry of a transcript looks: messages as markdown, reasoning folded away, tool
 * and command cards with their output, file changes as diffs, plans as checklists, and the
 * turns' and session's own markers.
 */

import type { ContentPart, TurnEnded } from '../api.js';
import { pretty } from '../format.js';
import { Markdown } from '../markdown.js';
import { TurnChangesView } from './changes.js';
import { Diff } from './diff.js';
import { itemText, type Entry, type ItemState, type Transcript } from './transcript.js';

type Part<T extends ContentPart['type']> = Extract<ContentPart, { type: T }>;

function part<T extends ContentPart['type']>(state: ItemState, type: T): Part<T> | undefined {
  return state.item.content?.find((p): p is Part<T> => p.type === type);
}

function Status({ state }: { state: ItemState }) {
  const status = state.item.status;
  const label = status === 'inProgress' ? 'running' : status;
  return <span class={`badge status-${status}`}>{label}</span>;
}

function ToolResult({ state }: { state: ItemState }) {
  const result = part(state, 'toolResult');
  const output = result?.output ?? itemText(state);
  return (
    <div class={result?.isError ? 'output error' : 'output'}>
      <div class="label">{result?.isError ? 'Error' : 'Result'}</div>
      <pre>{output}</pre>
    </div>
  );
}

function ToolCall({ state, transcript }: { state: ItemState; transcript: Transcript }) {
  const call = part(state, 'toolCall');
  const name = call ? (call.mcp ? `${call.mcp.server} · ${call.mcp.tool}` : call.name) : 'tool';
  const children = state.children.map((id) => transcript.items.get(id)).filter((c) => c !== undefined);
  return (
    <section class="card tool" aria-label={`Tool call ${name}`}>
      <header>
        <span class="kind">Tool</span> <code>{name}</code> <Status state={state} />
      </header>
      {call && (
        <details>
          <summary>Arguments</summary>
          <pre>{pretty(call.arguments)}</pre>
        </details>
      )}
      {children.map((child) => (
        <ItemView key={child.item.itemId} state={child} transcript={transcript} />
      ))}
    </section>
  );
}

function Command({ state }: { state: ItemState }) {
  const command = part(state, 'commandExecution');
  const output = state.item.status === 'inProgress' ? state.streamed : (command?.output ?? state.streamed);
  return (
    <section class="card command" aria-label="Command">
      <header>
        <span class="kind">Command</span> <code>{command?.command ?? ''}</code> <Status state={state} />
        {command?.exitCode != null && <span class="badge">exit {command.exitCode}</span>}
      </header>
      {command?.cwd && <div class="muted">in {command.cwd}</div>}
      {output && <pre class="output">{output}</pre>}
    </section>
  );
}

function FileChange({ state }: { state: ItemState }) {
  const changes = (state.item.content ?? []).filter((p): p is Part<'fileChange'> => p.type === 'fileChange');
  return (
    <section class="card file-change" aria-label="File change">
      <header>
        <span class="kind">Files</span> <Status state={state} />
      </header>
      {changes.map((change, i) => (
        <div key={i} class="file">
          <div>
            <span class={`badge change-${change.changeKind}`}>{change.changeKind}</span> <code>{change.path}</code>
          </div>
          {change.diff && <Diff diff={change.diff} />}
        </div>
      ))}
    </section>
  );
}

function Plan({ state }: { state: ItemState }) {
  const plan = part(state, 'plan');
  return (
    <section class="card plan" aria-label="Plan">
      <header>
        <span class="kind">Plan</span>
      </header>
      {plan?.text && <Markdown text={plan.text} />}
      <ul class="plan-entries">
        {(plan?.entries ?? []).map((entry, i) => (
          <li key={i} class={`plan-${entry.status}`}>
            <span class="plan-mark" aria-hidden="true">
              {entry.status === 'completed' ? '✓' : entry.status === 'inProgress' ? '▸' : '○'}
            </span>{' '}
            {entry.content} <span class="visually-hidden">({entry.status})</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Message({ state }: { state: ItemState }) {
  const role = state.item.role ?? 'assistant';
  const text = itemText(state);
  const images = (state.item.content ?? []).filter((p): p is Part<'image'> => p.type === 'image');
  return (
    <article class={`message role-${role}`} aria-label={role === 'user' ? 'You' : 'Agent'}>
      <div class="who">{role === 'user' ? 'You' : role === 'assistant' ? 'Agent' : role}</div>
      {role === 'user' ? <p class="plain">{text}</p> : <Markdown text={text} />}
      {images.map((image, i) => (
        <div key={i} class="muted">
          [image {image.path ?? image.mediaType}]
        </div>
      ))}
      {state.item.status === 'inProgress' && <span class="cursor" aria-hidden="true" />}
    </article>
  );
}

/** One item, by kind. */
export function ItemView({ state, transcript }: { state: ItemState; transcript: Transcript }) {
  switch (state.item.kind) {
    case 'message':
      return <Message state={state} />;
    case 'reasoning':
      return (
        <details class="reasoning">
          <summary>Reasoning{state.item.status === 'inProgress' ? '…' : ''}</summary>
          <p class="plain">{itemText(state)}</p>
        </details>
      );
    case 'toolCall':
      return <ToolCall state={state} transcript={transcript} />;
    case 'toolResult':
      return <ToolResult state={state} />;
    case 'commandExecution':
      return <Command state={state} />;
    case 'fileChange':
      return <FileChange state={state} />;
    case 'plan':
      return <Plan state={state} />;
    case 'status': {
      const status = part(state, 'status');
      return (
        <div class="status-line">
          {status?.label ?? 'status'}
          {status?.detail ? ` — ${status.detail}` : ''}
        </div>
      );
    }
    case 'unparsed': {
      const unparsed = part(state, 'unparsed');
      return (
        <section class="card unparsed" aria-label="Unparsed">
          <header>
            <span class="kind">Unparsed</span> <span class="muted">{unparsed?.error}</span>
          </header>
          <pre>{pretty(unparsed?.raw)}</pre>
        </section>
      );
    }
  }
}

/** One entry of the transcript. */
export function EntryView({
  entry,
  transcript,
  sessionId,
}: {
  entry: Entry;
  transcript: Transcript;
  sessionId: string;
}) {
  switch (entry.kind) {
    case 'item': {
      const state = transcript.items.get(entry.itemId);
      return state ? <ItemView state={state} transcript={transcript} /> : null;
    }
    case 'sessionStarted': {
      const d = entry.event.data;
      return (
        <div class="marker">
          Session started · {d.agent}
          {d.agentVersion ? ` ${d.agentVersion}` : ''}
          {d.model ? ` · ${d.model}` : ''}
          {d.permissionMode ? ` · permissions: ${d.permissionMode}` : ''}
        </div>
      );
    }
    case 'sessionEnded': {
      const d = entry.event.data;
      return (
        <div class="marker" role="status">
          Session ended ({d.reason}
          {d.exitCode != null ? `, exit ${d.exitCode}` : ''})
          {d.stderrTail && <pre>{d.stderrTail}</pre>}
        </div>
      );
    }
    case 'handedOver':
      return <div class="marker">Handed over: {pretty(entry.event.data)}</div>;
    case 'turnStarted':
      return <div class="turn-start" aria-hidden="true" />;
    case 'turnEnded':
      return <TurnEndedView sessionId={sessionId} turnId={entry.turnId} ended={entry.ended} />;
    case 'permission': {
      const p = transcript.permissions.get(entry.permissionId);
      if (!p) return null;
      const outcome = p.resolved ? p.resolved.outcome : 'waiting';
      return (
        <div class="marker permission-marker">
          Permission: {p.request.title} — <strong>{outcome}</strong>
          {p.resolved?.automatic ? ' (automatic)' : ''}
        </div>
      );
    }
    case 'question': {
      const q = transcript.questions.get(entry.questionId);
      if (!q) return null;
      return (
        <div class="marker question-marker">
          Question: {q.request.questions.map((x) => x.question).join(' / ')} —{' '}
          <strong>{q.resolved ? q.resolved.outcome : 'waiting'}</strong>
          {q.resolved?.answers ? `: ${q.resolved.answers.map((a) => a.join(', ')).join(' / ')}` : ''}
        </div>
      );
    }
    case 'toolCall': {
      const c = transcript.toolCalls.get(entry.callId);
      if (!c) return null;
      return (
        <div class="marker">
          Host tool <code>{c.request.tool}</code> — <strong>{c.resolved ? c.resolved.outcome : 'waiting'}</strong>
        </div>
      );
    }
    case 'error': {
      const error = entry.event.data;
      return (
        <div class="card error" role="alert">
          <header>
            <span class="kind">Error</span> <code>{error.type}</code>
          </header>
          <p class="plain">{error.message}</p>
        </div>
      );
    }
    case 'unknown':
      return (
        <section class="card unparsed" aria-label="Unreadable event">
          <header>
            <span class="kind">Unreadable event</span> <code>{entry.event.data.storedType}</code>
          </header>
          <pre>{pretty(entry.event.data.stored)}</pre>
        </section>
      );
  }
}

function TurnEndedView({
  sessionId,
  turnId,
  ended,
}: {
  sessionId: string;
  turnId: string;
  ended: TurnEnded;
}) {
  const usage = ended.usage;
  return (
    <div class={`turn-end stop-${ended.stopReason}`}>
      <span>Turn {ended.stopReason}</span>
      {usage && (
        <span class="muted">
          {' '}
          · {usage.inputTokens} in / {usage.outputTokens} out
          {usage.totalCostUsd != null ? ` · $${usage.totalCostUsd.toFixed(4)}` : ''}
        </span>
      )}
      {ended.changes && <TurnChangesView sessionId={sessionId} turnId={turnId} counts={ended.changes} />}
    </div>
  );
}
