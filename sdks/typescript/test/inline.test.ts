// The inline entry stands alone: no package, no Node builtin, no Node global; and the
// README reports its current size.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from './helpers.js';

interface SizeReport {
  inline: { minified: number; gzip: number; modules: number; imports: string[] };
  problems: string[];
}

function measure(): SizeReport {
  const out = execFileSync(process.execPath, [join(packageRoot, 'scripts', 'inline-size.mjs'), '--json'], {
    cwd: packageRoot,
    encoding: 'utf8',
  });
  return JSON.parse(out) as SizeReport;
}

describe('inline entry', () => {
  const report = measure();

  it('imports nothing outside itself: no package, no node: builtin, no Node global', () => {
    assert.deepEqual(report.inline.imports, []);
    assert.deepEqual(report.problems, []);
    assert.ok(report.inline.modules >= 5, 'the bundle was built from dist/');
  });

  it('is exported as sandbox-daemon/inline without the validators', () => {
    const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
      exports: Record<string, { default?: string }>;
    };
    assert.equal(pkg.exports['./inline']?.default, './dist/inline.js');
    const source = readFileSync(join(packageRoot, 'src', 'inline.ts'), 'utf8');
    assert.doesNotMatch(source, /validators\.js/);
  });

  it('stays small, and the README reports its size', () => {
    // The budget: 8 KiB until the files API (six operations) took it to 8.4 KiB, the processes
    // API (eight operations and a followed log, sharing the event stream's machinery) to 9.0,
    // terminals (a ticket, the URL, and a WebSocket carrying output, input, resizes and the
    // exit: browsers are who needs them, so they stay in this entry) and turn changes to 10.0,
    // webhooks (five operations and a pager) and idempotency keys to 10.2, the AI SDK's UI
    // message stream (one operation read as chunks) to 10.5.
    assert.ok(report.inline.gzip < 10.8 * 1024, `inline is ${report.inline.gzip} bytes gzipped`);
    const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');
    const match = /inline size: ([0-9.]+) KiB minified, ([0-9.]+) KiB minified \+ gzip/.exec(readme);
    assert.ok(match, 'README has the "inline size: … KiB minified, … KiB minified + gzip" line');
    const [minified, gzip] = [Number(match[1]), Number(match[2])];
    assert.ok(Math.abs(minified - report.inline.minified / 1024) < 0.5, `README says ${minified} KiB minified, now ${(report.inline.minified / 1024).toFixed(1)}`);
    assert.ok(Math.abs(gzip - report.inline.gzip / 1024) < 0.3, `README says ${gzip} KiB gzip, now ${(report.inline.gzip / 1024).toFixed(1)}`);
  });
});
