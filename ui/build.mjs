// Builds the inspector into dist/ (which the daemon binary embeds, so building the daemon
// needs no Node): src/main.tsx bundled and minified into app.js, src/app.css minified into
// app.css, index.html and favicon.svg as they are. Prints each file's size, raw and gzip.
//
//   node build.mjs           # write dist/
//   node build.mjs --check   # fail if dist/ differs from what the sources build
import { build } from 'esbuild';
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const here = new URL('.', import.meta.url).pathname;
const check = process.argv.includes('--check');
const dist = join(here, 'dist');
const out = check ? await mkdtemp(join(tmpdir(), 'inspector-')) : dist;
await mkdir(out, { recursive: true });

const common = { bundle: true, minify: true, write: false, logLevel: 'warning', legalComments: 'eof', charset: 'utf8' };
const [js, css] = await Promise.all([
  build({
    ...common,
    entryPoints: [join(here, 'src/main.tsx')],
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outfile: join(out, 'app.js'),
  }),
  build({ ...common, entryPoints: [join(here, 'src/app.css')], outfile: join(out, 'app.css') }),
]);
for (const file of [...js.outputFiles, ...css.outputFiles]) await writeFile(file.path, file.contents);
for (const name of ['index.html', 'favicon.svg']) await copyFile(join(here, 'src', name), join(out, name));

const names = (await readdir(out)).sort();
let raw = 0;
let gzip = 0;
for (const name of names) {
  const bytes = await readFile(join(out, name));
  const zipped = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gzip += zipped;
  console.log(`${name.padEnd(12)} ${String(bytes.length).padStart(8)} B  ${String(zipped).padStart(7)} B gzip`);
}
console.log(`${'total'.padEnd(12)} ${String(raw).padStart(8)} B  ${String(gzip).padStart(7)} B gzip`);

if (check) {
  const stale = [];
  const built = new Set(names);
  for (const name of new Set([...names, ...(await readdir(dist))])) {
    const a = built.has(name) ? await readFile(join(out, name)) : undefined;
    const b = await readFile(join(dist, name)).catch(() => undefined);
    if (!a || !b || !a.equals(b)) stale.push(name);
  }
  await rm(out, { recursive: true, force: true });
  if (stale.length) {
    console.error(`ui/dist is stale (${stale.join(', ')}): run \`npm run build\` in ui/ and commit dist/`);
    process.exit(1);
  }
  console.log('ui/dist matches the sources');
}
