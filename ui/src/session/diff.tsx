/** A unified diff, line by line: additions, deletions, hunk headers and context. */

/** Renders a unified diff (`--- a/…`, `+++ b/…`, `@@ … @@` hunks). */
export function Diff({ diff }: { diff: string }) {
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  return (
    <pre class="diff" aria-label="Diff">
      {lines.map((line, i) => {
        const kind = line.startsWith('+++') || line.startsWith('---')
          ? 'file'
          : line.startsWith('@@')
            ? 'hunk'
            : line.startsWith('+')
              ? 'add'
              : line.startsWith('-')
                ? 'del'
                : 'ctx';
        return (
          <span key={i} class={`diff-${kind}`}>
            {line}
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}
