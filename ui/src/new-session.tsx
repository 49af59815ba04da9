/**
 * The new-session screen: the agent, its permission and agent mode, model and variant, all
 * from the daemon's live listings for the chosen agent, and the working directory.
 */

import { useEffect, useState } from 'preact/hooks';
import type { AgentInfo, ModelsResponse, ModesResponse, PermissionMode } from './api.js';
import { describe, isAbort } from './api.js';
import { useAgents, useApp } from './context.js';
import { newSessionId } from './format.js';
import { href, navigate } from './router.js';

type AgentId = AgentInfo['id'];

/** The new-session screen. */
export function NewSessionPage() {
  const { daemon, report } = useApp();
  const agents = useAgents();
  const [agent, setAgent] = useState<AgentId>('mock');
  const [models, setModels] = useState<ModelsResponse | undefined>();
  const [modes, setModes] = useState<ModesResponse | undefined>();
  const [listingError, setListingError] = useState<string | undefined>();
  const [sessionId, setSessionId] = useState(newSessionId);
  const [permissionMode, setPermissionMode] = useState<PermissionMode | ''>('');
  const [agentMode, setAgentMode] = useState('');
  const [model, setModel] = useState('');
  const [variant, setVariant] = useState('');
  const [cwd, setCwd] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    setModels(undefined);
    setModes(undefined);
    setListingError(undefined);
    setModel('');
    setVariant('');
    setAgentMode('');
    setPermissionMode('');
    const signal = controller.signal;
    Promise.all([daemon.agentModels(agent, { signal }), daemon.agentModes(agent, { signal })]).then(
      ([m, d]) => {
        setModels(m);
        setModes(d);
      },
      (e) => isAbort(e) || setListingError(describe(e)),
    );
    return () => controller.abort();
  }, [daemon, agent]);

  const chosenModel = models?.models.find((m) => m.id === (model || models.defaultModel));
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await daemon.createSession(sessionId, {
        agent,
        permissionMode: permissionMode || undefined,
        agentMode: agentMode || undefined,
        model: model || undefined,
        variant: variant || undefined,
        cwd: cwd.trim() || undefined,
      });
      navigate(href({ name: 'session', id: sessionId }));
    } catch (e) {
      report(e);
      setBusy(false);
    }
  };

  return (
    <main id="main">
      <h1>New session</h1>
      <form class="form" onSubmit={submit}>
        <div class="field">
          <label for="session-id">Session id</label>
          <input
            id="session-id"
            required
            maxLength={128}
            pattern="[A-Za-z0-9_\-][A-Za-z0-9._\-]*"
            value={sessionId}
            onInput={(e) => setSessionId((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="agent">Agent</label>
          <select id="agent" value={agent} onChange={(e) => setAgent((e.currentTarget as HTMLSelectElement).value as AgentId)}>
            {(agents ?? [{ id: 'mock', name: 'Mock', installed: true } as AgentInfo]).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
                {a.installed ? '' : ' (installed on first use)'}
              </option>
            ))}
          </select>
        </div>
        {listingError && (
          <p class="error-text" role="alert">
            The agent's models or modes could not be listed: {listingError}
          </p>
        )}
        <div class="field">
          <label for="permission-mode">Permission mode</label>
          <select
            id="permission-mode"
            value={permissionMode}
            onChange={(e) => setPermissionMode((e.currentTarget as HTMLSelectElement).value as PermissionMode | '')}
          >
            <option value="">agent's default</option>
            {(modes?.permissionModes ?? []).map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="agent-mode">Agent mode</label>
          <select id="agent-mode" value={agentMode} onChange={(e) => setAgentMode((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">default{modes?.defaultMode ? ` (${modes.defaultMode})` : ''}</option>
            {(modes?.modes ?? []).map((m) => (
              <option key={m.id} value={m.id} title={m.description}>
                {m.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="model">Model</label>
          <select
            id="model"
            value={model}
            onChange={(e) => {
              setModel((e.currentTarget as HTMLSelectElement).value);
              setVariant('');
            }}
          >
            <option value="">default{models?.defaultModel ? ` (${models.defaultModel})` : ''}</option>
            {(models?.models ?? []).map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="variant">Variant</label>
          <select
            id="variant"
            value={variant}
            disabled={!chosenModel?.variants?.length}
            onChange={(e) => setVariant((e.currentTarget as HTMLSelectElement).value)}
          >
            <option value="">default{chosenModel?.defaultVariant ? ` (${chosenModel.defaultVariant})` : ''}</option>
            {(chosenModel?.variants ?? []).map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="cwd">Working directory</label>
          <input
            id="cwd"
            placeholder="the daemon's working directory"
            value={cwd}
            onInput={(e) => setCwd((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create session'}
          </button>
        </div>
      </form>
    </main>
  );
}
