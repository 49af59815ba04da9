#!/usr/bin/env node
// Generates src/generated/ from the daemon's OpenAPI document (spec/openapi.json):
//   openapi.ts     wire types (openapi-typescript)
//   validators.ts  zod 4 validators, Standard Schema (scripts/zod-emitter.mjs)
//   routes.ts      method and path of every operation
//   streams.ts     frame types of event streams tagged by `event` (scripts/zod-emitter.mjs)
//
//   node scripts/generate.mjs            write src/generated/
//   node scripts/generate.mjs --out DIR  write DIR instead
//   node scripts/generate.mjs --check    regenerate into a temp dir; fail on any difference
//   SANDBOX_DAEMON_SPEC=path             read another OpenAPI document

import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { emitRoutes, emitStreams, emitValidators } from './zod-emitter.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const specPath = resolve(process.env.SANDBOX_DAEMON_SPEC ?? join(root, '..', '..', 'spec', 'openapi.json'));
const committed = join(root, 'src', 'generated');

const args = process.argv.slice(2);
const checkMode = args.includes('--check');
const outIndex = args.indexOf('--out');
const outDir = outIndex >= 0 ? resolve(args[outIndex + 1]) : committed;

/** Writes every generated file into `dir`. */
async function generate(dir) {
  const spec = JSON.parse(readFileSync(specPath, 'utf8'));
  const tool = JSON.parse(readFileSync(join(root, 'node_modules', 'openapi-typescript', 'package.json'), 'utf8'));
  const source = relative(root, specPath).replaceAll('\\', '/');
  const header = (by) =>
    `// Generated from ${source} (${spec.info.title} ${spec.info.version}) by ${by}.\n` +
    '// Do not edit: run `npm run generate`. `npm run check:generated` fails when this file is stale.\n';

  const ast = await openapiTS(forTypes(spec), {
    rootTypes: true,
    rootTypesNoSchemaPrefix: true,
  });
  const files = {
    'openapi.ts': header(`openapi-typescript ${tool.version}`) + '\n' + astToString(ast),
    'validators.ts': emitValidators(spec, { header: header('scripts/zod-emitter.mjs') }),
    'routes.ts': emitRoutes(spec, { header: header('scripts/zod-emitter.mjs') }),
    'streams.ts': emitStreams(spec, { header: header('scripts/zod-emitter.mjs') }),
  };
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return Object.keys(files);
}

/**
 * The document as openapi-typescript gets it. One shape is rewritten: a `oneOf` that only
 * lists alternative `required` sets of the object's own properties (`SendMessageRequest`:
 * `message` or `content`; an image `MessagePart`: `data` or `path`), which it renders as
 * `& (unknown | unknown)`, dropping the rule. Each alternative gets the properties it
 * requires (without `null`: the daemon takes a null as absent), so the type is
 * `{ message?, content? } & ({ message: string } | { content: MessagePart[] })`.
 *
 * Two more are opened up: a bare `{ "type": "object" }` (a tool call's `input`; or
 * `["object", "null"]`: a stored login's `login`), which it renders as
 * `Record<string, never>`, and a JSON Schema given as an object schema
 * (`HostTool.inputSchema`: its `type` property is `const: "object"`), which it renders
 * closed, refusing `properties` and the rest. Both take any other member.
 * The validators are emitted from the document as it is.
 */
function forTypes(spec) {
  const out = structuredClone(spec);
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const { oneOf: branches, properties } = node;
    const alternatives =
      Array.isArray(branches) &&
      properties &&
      branches.every(
        (b) => Object.keys(b).length === 1 && Array.isArray(b.required) && b.required.every((n) => n in properties),
      );
    const open =
      (node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object'))) &&
      !('additionalProperties' in node) &&
      (!properties || (Object.keys(properties).length === 1 && properties.type?.const === 'object'));
    if (open) node.additionalProperties = true;
    if (alternatives) {
      node.oneOf = branches.map((branch) => ({
        type: 'object',
        required: branch.required,
        properties: Object.fromEntries(branch.required.map((name) => [name, nonNull(properties[name])])),
      }));
    }
    Object.values(node).forEach(visit);
  };
  visit(out.components.schemas);
  return out;
}

/** A property's schema without `null` among its types, and without its description. */
function nonNull(schema) {
  const { description: _, ...rest } = structuredClone(schema);
  if (Array.isArray(rest.type)) {
    const types = rest.type.filter((t) => t !== 'null');
    rest.type = types.length === 1 ? types[0] : types;
  }
  return rest;
}

function firstDifference(a, b) {
  const left = a.split('\n');
  const right = b.split('\n');
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    if (left[i] !== right[i]) {
      return `line ${i + 1}:\n  committed:   ${left[i] ?? '<end of file>'}\n  regenerated: ${right[i] ?? '<end of file>'}`;
    }
  }
  return 'identical';
}

if (checkMode) {
  const temp = mkdtempSync(join(tmpdir(), 'sandbox-daemon-generated-'));
  try {
    const names = await generate(temp);
    const problems = [];
    const present = existsSync(committed) ? readdirSync(committed) : [];
    for (const extra of present.filter((n) => !names.includes(n))) {
      problems.push(`src/generated/${extra}: not produced by the generator (remove it)`);
    }
    for (const name of names) {
      const fresh = readFileSync(join(temp, name), 'utf8');
      const path = join(committed, name);
      if (!existsSync(path)) {
        problems.push(`src/generated/${name}: missing`);
        continue;
      }
      const old = readFileSync(path, 'utf8');
      if (old !== fresh) problems.push(`src/generated/${name}: differs at ${firstDifference(old, fresh)}`);
    }
    if (problems.length) {
      console.error(`generated files are stale against ${relative(root, specPath)}:`);
      for (const p of problems) console.error(`  ${p}`);
      console.error('run `npm run generate` and commit the result');
      process.exitCode = 1; // not process.exit(): the temp dir is removed below
    } else {
      console.log(`src/generated/ is up to date with ${relative(root, specPath)} (${names.join(', ')})`);
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
} else {
  const names = await generate(outDir);
  console.log(`wrote ${names.map((n) => relative(process.cwd(), join(outDir, n))).join(', ')}`);
}
