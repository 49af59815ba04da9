/** What a turn changed in the workspace: the counts, and on demand every file's diff. */

import { useState } from 'preact/hooks';
import type { ChangeCounts, TurnChanges } from '../api.js';
import { describe } from '../api.js';
import { useApp } from '../context.js';
import { bytes } from '../format.js';
import { describeChanges } from './transcript.js';
import { Diff } from './diff.js';

const OMITTED: Record<string, string> = {
  binary: 'binary file',
  tooLarge: 'too large to diff',
  turnLimit: "over the turn's diff budget",
  modeOnly: 'only its mode changed',
  unreadable: 'not readable by the daemon',
};

/** The counts of a turn's changes, with a button that loads and shows the diffs. */
export function TurnChangesView({ sessionId, turnId, counts }: { sessionId: string; turnId: string; counts: ChangeCounts }) {
  const { daemon } = useApp();
  const [changes, setChanges] = useState<TurnChanges | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [open, setOpen] = useState(false);
  const summary = describeChanges(counts);
  if (!summary) return <span class="muted"> · no files changed</span>;
  const toggle = async () => {
    setOpen(!open);
    if (open || changes) return;
    try {
      setChanges(await daemon.turnChanges(sessionId, turnId));
    } catch (e) {
      setError(describe(e));
    }
  };
  return (
    <span class="turn-changes">
      {' · '}
      <button type="button" class="link" aria-expanded={open} onClick={toggle}>
        {summary}
      </button>
      {open && (
        <div class="changes">
          {error && <p role="alert" class="error-text">{error}</p>}
          {!changes && !error && <p class="muted">Loading…</p>}
          {changes?.files.map((file) => (
            <div key={file.path} class="file">
              <div>
                <span class={`badge change-${file.change}`}>{file.change}</span> <code>{file.path}</code>
                {file.sizeAfter != null && <span class="muted"> {bytes(file.sizeAfter)}</span>}
              </div>
              {file.diff ? <Diff diff={file.diff} /> : file.diffOmitted && <p class="muted">No diff: {OMITTED[file.diffOmitted] ?? file.diffOmitted}</p>}
            </div>
          ))}
        </div>
      )}
    </span>
  );
}
