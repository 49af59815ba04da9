/**
 * The tray: what waits for the user, pinned above the composer. Permission cards say what
 * the agent wants to run or change (Once / Always / Reject); question forms take one
 * answer, or several where the question allows it, and a free answer where allowed; host
 * tool calls take a result or a rejection. Every control is a native button or form
 * field, so the tray works from the keyboard.
 */

import { useState } from 'preact/hooks';
import type { PermissionReply, PermissionRequest, Question, QuestionRequest, ToolCallRequest } from '../api.js';
import { useAction, useApp } from '../context.js';
import { pretty } from '../format.js';

function PermissionCard({ sessionId, request }: { sessionId: string; request: PermissionRequest }) {
  const { daemon } = useApp();
  const [busy, run] = useAction();
  const reply = (answer: PermissionReply) =>
    run(() => daemon.replyPermission(sessionId, request.permissionId, { reply: answer }));
  const id = `perm-${request.permissionId}`;
  return (
    <section class="card permission" aria-labelledby={id}>
      <header>
        <span class="kind">Permission</span> <strong id={id}>{request.title}</strong>
      </header>
      {request.command && (
        <pre class="command-line">
          <code>{request.command}</code>
        </pre>
      )}
      {request.paths && request.paths.length > 0 && (
        <ul class="paths">
          {request.paths.map((p) => (
            <li key={p}>
              <code>{p}</code>
            </li>
          ))}
        </ul>
      )}
      {request.plan && <pre>{request.plan}</pre>}
      {request.input !== undefined && request.input !== null && (
        <details>
          <summary>
            Input{request.tool ? ` of ${request.tool}` : ''}
          </summary>
          <pre>{pretty(request.input)}</pre>
        </details>
      )}
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={() => reply('once')}>
          Once
        </button>
        <button
          type="button"
          disabled={busy || !request.alwaysScope}
          title={request.alwaysScope ? `Always allow: ${request.alwaysScope}` : 'The agent offers no lasting approval'}
          onClick={() => reply('always')}
        >
          Always{request.alwaysScope ? ` (${request.alwaysScope})` : ''}
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => reply('reject')}>
          Reject
        </button>
      </div>
    </section>
  );
}

function QuestionFields({
  question,
  index,
  prefix,
  selected,
  custom,
  onToggle,
  onCustom,
}: {
  question: Question;
  index: number;
  prefix: string;
  selected: string[];
  custom: string;
  onToggle: (label: string, on: boolean) => void;
  onCustom: (text: string) => void;
}) {
  const name = `${prefix}-${index}`;
  return (
    <fieldset>
      <legend>
        {question.header && <span class="chip">{question.header}</span>} {question.question}
        {question.multiSelect && <span class="muted"> (choose any)</span>}
      </legend>
      {(question.options ?? []).map((option, o) => {
        const id = `${name}-${o}`;
        return (
          <div key={option.label} class="option">
            <input
              id={id}
              type={question.multiSelect ? 'checkbox' : 'radio'}
              name={name}
              value={option.label}
              checked={selected.includes(option.label)}
              onChange={(e) => onToggle(option.label, (e.currentTarget as HTMLInputElement).checked)}
            />
            <label for={id}>
              {option.label}
              {option.description && <span class="muted"> — {option.description}</span>}
            </label>
          </div>
        );
      })}
      {(question.allowCustom || (question.options ?? []).length === 0) && (
        <div class="option">
          <label for={`${name}-custom`}>{(question.options ?? []).length === 0 ? 'Answer' : 'Other'}</label>{' '}
          <input
            id={`${name}-custom`}
            type="text"
            value={custom}
            onInput={(e) => onCustom((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
      )}
    </fieldset>
  );
}

function QuestionForm({ sessionId, request }: { sessionId: string; request: QuestionRequest }) {
  const { daemon } = useApp();
  const [selected, setSelected] = useState<string[][]>(() => request.questions.map(() => []));
  const [custom, setCustom] = useState<string[]>(() => request.questions.map(() => ''));
  const [busy, run] = useAction();
  const answers = request.questions.map((_, i) => {
    const free = custom[i]?.trim();
    return free ? [...(selected[i] ?? []), free] : (selected[i] ?? []);
  });
  const complete = answers.every((a) => a.length > 0);
  const submit = (event: Event) => {
    event.preventDefault();
    if (complete) void run(() => daemon.replyQuestion(sessionId, request.questionId, { answers }));
  };
  const prefix = `q-${request.questionId}`;
  return (
    <form class="card question" aria-label="Question" onSubmit={submit}>
      <header>
        <span class="kind">Question</span>
      </header>
      {request.questions.map((question, i) => (
        <QuestionFields
          key={i}
          question={question}
          index={i}
          prefix={prefix}
          selected={selected[i] ?? []}
          custom={custom[i] ?? ''}
          onToggle={(label, on) =>
            setSelected((all) =>
              all.map((s, j) =>
                j !== i ? s : question.multiSelect ? (on ? [...s, label] : s.filter((l) => l !== label)) : on ? [label] : [],
              ),
            )
          }
          onCustom={(text) => setCustom((all) => all.map((c, j) => (j === i ? text : c)))}
        />
      ))}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || !complete}>
          Answer
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => run(() => daemon.rejectQuestion(sessionId, request.questionId))}>
          Reject
        </button>
      </div>
    </form>
  );
}

function ToolCallCard({ sessionId, request }: { sessionId: string; request: ToolCallRequest }) {
  const { daemon } = useApp();
  const [output, setOutput] = useState('');
  const [busy, run] = useAction();
  const id = `call-${request.callId}`;
  return (
    <form
      class="card host-tool"
      aria-labelledby={id}
      onSubmit={(e) => {
        e.preventDefault();
        void run(() => daemon.toolCallResult(sessionId, request.callId, { output }));
      }}
    >
      <header>
        <span class="kind">Host tool</span> <code id={id}>{request.tool}</code>
      </header>
      <pre>{pretty(request.input)}</pre>
      <label for={`${id}-output`}>Result</label>
      <textarea id={`${id}-output`} rows={3} value={output} onInput={(e) => setOutput((e.currentTarget as HTMLTextAreaElement).value)} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Send result
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => run(() => daemon.toolCallReject(sessionId, request.callId, {}))}>
          Reject
        </button>
      </div>
    </form>
  );
}

/** Everything that waits for the user in a session; nothing when nothing waits. */
export function Tray({
  sessionId,
  permissions,
  questions,
  toolCalls,
}: {
  sessionId: string;
  permissions: PermissionRequest[];
  questions: QuestionRequest[];
  toolCalls: ToolCallRequest[];
}) {
  const count = permissions.length + questions.length + toolCalls.length;
  if (count === 0) return null;
  return (
    <section class="tray" aria-label={`Waiting for you (${count})`}>
      <h2 class="visually-hidden">Waiting for you</h2>
      {permissions.map((p) => (
        <PermissionCard key={p.permissionId} sessionId={sessionId} request={p} />
      ))}
      {questions.map((q) => (
        <QuestionForm key={q.questionId} sessionId={sessionId} request={q} />
      ))}
      {toolCalls.map((c) => (
        <ToolCallCard key={c.callId} sessionId={sessionId} request={c} />
      ))}
    </section>
  );
}
