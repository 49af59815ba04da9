/**
 * The agents screen: each agent, whether and which versions are installed (the one in use
 * marked), an Install button whose progress bar follows the daemon's streamed install,
 * and on demand the agent's models and modes.
 */

import { useEffect, useState } from 'preact/hooks';
import type { AgentInfo, InstallProgress, ModelsResponse, ModesResponse } from './api.js';
import { describe, isAbort } from './api.js';
import { useAgents, useApp } from './context.js';
import { bytes } from './format.js';

type Install =
  | { state: 'running'; progress: InstallProgress | undefined }
  | { state: 'done'; version: string; alreadyInstalled: boolean }
  | { state: 'failed'; message: string };

function progressText(progress: InstallProgress | undefined): string {
  if (!progress) return 'Starting…';
  switch (progress.phase) {
    case 'waiting':
      return 'Waiting for another install of this agent…';
    case 'resolving':
      return `Resolving ${progress.requested}…`;
    case 'downloading':
      return `Downloading ${progress.version}: ${bytes(progress.bytes)}${progress.total ? ` of ${bytes(progress.total)}` : ''}`;
    case 'verifying':
      return `Verifying ${progress.version}…`;
  }
}

function InstallProgressView({ agent, install }: { agent: string; install: Install }) {
  if (install.state === 'failed') {
    return (
      <p class="error-text" role="alert">
        Install failed: {install.message}
      </p>
    );
  }
  if (install.state === 'done') {
    return (
      <p role="status">
        {install.alreadyInstalled ? `Already installed: ${install.version}` : `Installed ${install.version}`}
      </p>
    );
  }
  const p = install.progress;
  const downloading = p?.phase === 'downloading' && p.total ? p : undefined;
  const value = downloading ? downloading.bytes : p?.phase === 'verifying' ? 1 : undefined;
  const max = downloading ? (downloading.total ?? 1) : 1;
  return (
    <div class="install-progress">
      {/* Without a value the bar is indeterminate: resolving, or a size not announced. */}
      {value === undefined ? (
        <progress aria-label={`Installing ${agent}`} />
      ) : (
        <progress aria-label={`Installing ${agent}`} max={max} value={value} />
      )}
      <span role="status">{progressText(p)}</span>
    </div>
  );
}

function Listings({ agent }: { agent: AgentInfo }) {
  const { daemon } = useApp();
  const [open, setOpen] = useState(false);
  const [models, setModels] = useState<ModelsResponse | undefined>();
  const [modes, setModes] = useState<ModesResponse | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (!open || models) return;
    const controller = new AbortController();
    const signal = controller.signal;
    Promise.all([daemon.agentModels(agent.id, { signal }), daemon.agentModes(agent.id, { signal })]).then(
      ([m, d]) => {
        setModels(m);
        setModes(d);
      },
      (e) => isAbort(e) || setError(describe(e)),
    );
    return () => controller.abort();
  }, [open]);
  return (
    <details onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Models and modes</summary>
      {error && <p class="error-text">{error}</p>}
      {!error && !models && open && <p class="muted">Loading…</p>}
      {models && (
        <div class="listings">
          <h3>Models</h3>
          <ul>
            {models.models.map((m) => (
              <li key={m.id}>
                <code>{m.id}</code> {m.name !== m.id && m.name}
                {m.id === models.defaultModel && <span class="badge">default</span>}
                {m.variants && m.variants.length > 0 && <span class="muted"> · variants: {m.variants.join(', ')}</span>}
              </li>
            ))}
          </ul>
          <h3>Modes</h3>
          <ul>
            {(modes?.modes ?? []).map((m) => (
              <li key={m.id}>
                <code>{m.id}</code> {m.description}
                {m.id === modes?.defaultMode && <span class="badge">default</span>}
              </li>
            ))}
          </ul>
          <p>Permission modes: {(modes?.permissionModes ?? []).join(', ')}</p>
        </div>
      )}
    </details>
  );
}

function AgentCard({ agent, onInstalled }: { agent: AgentInfo; onInstalled: () => void }) {
  const { daemon } = useApp();
  const [install, setInstall] = useState<Install | undefined>();
  const run = async () => {
    setInstall({ state: 'running', progress: undefined });
    try {
      const body = agent.installed ? { reinstall: true } : {};
      for await (const frame of daemon.installAgentProgress(agent.id, body)) {
        if (frame.event === 'progress') setInstall({ state: 'running', progress: frame.data });
        else {
          setInstall({ state: 'done', version: frame.data.version ?? 'built in', alreadyInstalled: frame.data.alreadyInstalled });
          onInstalled();
        }
      }
    } catch (e) {
      setInstall({ state: 'failed', message: describe(e) });
    }
  };
  const headingId = `agent-${agent.id}`;
  return (
    <section class="card agent" aria-labelledby={headingId} data-agent={agent.id}>
      <header>
        <h2 id={headingId}>{agent.name}</h2>
        <span class={`badge ${agent.installed ? 'installed' : 'not-installed'}`}>
          {agent.installed ? 'installed' : 'not installed'}
        </span>
      </header>
      {agent.path && (
        <p class="muted">
          <code>{agent.path}</code>
        </p>
      )}
      {(agent.installedVersions ?? []).length > 0 && (
        <ul class="versions" aria-label="Installed versions">
          {(agent.installedVersions ?? []).map((v) => (
            <li key={v.version}>
              {v.version} {v.current && <span class="badge">in use</span>}
            </li>
          ))}
        </ul>
      )}
      {agent.id !== 'mock' && (
        <div class="actions">
          <button type="button" disabled={install?.state === 'running'} onClick={run}>
            {agent.installed ? 'Reinstall' : 'Install'} {agent.name}
          </button>
        </div>
      )}
      {install && <InstallProgressView agent={agent.name} install={install} />}
      <Listings agent={agent} />
    </section>
  );
}

/** The agents screen. */
export function AgentsPage() {
  const [tick, setTick] = useState(0);
  const agents = useAgents(tick);
  return (
    <main id="main">
      <h1>Agents</h1>
      {!agents ? (
        <p class="muted">Loading…</p>
      ) : (
        <div class="agents">
          {agents.map((a) => (
            <AgentCard key={a.id} agent={a} onInstalled={() => setTick((t) => t + 1)} />
          ))}
        </div>
      )}
    </main>
  );
}
