// Emits zod 4 validators (Standard Schema) from the daemon's OpenAPI document.
//
// It covers the JSON Schema the daemon's spec uses and nothing more: any keyword it does
// not know stops generation with the schema's location, so a spec change that needs more
// never yields a validator that silently accepts too much. Objects are `z.looseObject`
// (a newer daemon may add fields; RFC 7807 problems carry extension members) unless the
// schema says `additionalProperties: false`. A `oneOf` whose branches are objects tagged by
// one constant property becomes `z.discriminatedUnion`, so a failure names the field
// (`data.kind`) instead of "no branch matched"; an `allOf` of such a union and plain
// objects (the event envelope) is distributed over the union's branches for the same
// reason.
//
// An event stream (`text/event-stream`, described by OpenAPI 3.2's `itemSchema`) comes in
// two forms: one frame shape whose `data` is a component (the session's events:
// `streamSchemas`), or a `oneOf` of frames tagged by a constant `event`, each `data` its own
// component (install progress). The second yields a frame type (streams.ts, no runtime code)
// and a validator of the decoded frame `{ event, data }` (`streamFrameSchemas`). A stream the
// document describes only as text (`schema: { type: string }`, no `itemSchema`: a process's
// followed log) yields neither: its frames are typed and checked by the client's own code.
//
// An operation that answers only `101 Switching Protocols` (a process's terminal, a
// WebSocket) has no success body: its validator is `null` (its messages are read by the
// client's own code).

/** Keywords that only document a schema. */
const ANNOTATIONS = new Set([
  'description',
  'title',
  'examples',
  'example',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'format',
]);
const FORMATS = new Set(['date-time', 'int32', 'int64', 'uint32', 'uint64', 'double', 'float']);
const SUPPORTED = new Set([
  ...ANNOTATIONS,
  '$ref',
  'type',
  'enum',
  'const',
  'oneOf',
  'anyOf',
  'allOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
]);

const REF_PREFIX = '#/components/schemas/';
const SUCCESS = ['200', '201', '202', '203', '204'];

/** The name of a component's validator const. */
export const validatorName = (component) => `${component}Schema`;

/**
 * Generates the validators module.
 * @param {any} spec the OpenAPI document
 * @param {{ header: string }} options
 * @returns {string} TypeScript source
 */
export function emitValidators(spec, { header }) {
  const components = spec.components?.schemas ?? {};
  const ops = operations(spec);

  // Which components to emit: every schema reachable from a success response, from an event
  // stream's frames and from the problem body.
  const roots = new Set(['ProblemDetails']);
  const responseRoots = {};
  const streamRoots = {};
  const frameStreams = [];
  for (const op of ops) {
    const found = successSchema(op);
    responseRoots[op.operationId] = found.json;
    if (found.json.kind === 'ref') roots.add(found.json.name);
    if (found.stream?.kind === 'data') {
      streamRoots[op.operationId] = found.stream.name;
      roots.add(found.stream.name);
    }
    if (found.stream?.kind === 'frames') {
      frameStreams.push({ op, frames: found.stream.frames });
      for (const frame of found.stream.frames) roots.add(frame.name);
    }
  }
  const order = closure([...roots], components);

  const out = [header, "import * as z from 'zod';", "import type { components } from './openapi.js';"];
  if (frameStreams.length > 0) {
    const types = frameStreams.map(({ op }) => frameTypeName(op.operationId)).sort();
    out.push(`import type { ${types.join(', ')} } from './streams.js';`);
  }
  out.push('');
  out.push('type Schemas = components["schemas"];', '');
  for (const name of order) {
    const schema = components[name];
    const ctx = { components, component: name, prelude: [], pointer: `${REF_PREFIX}${name}` };
    const code = expr(schema, ctx, 0);
    out.push(...ctx.prelude);
    out.push(doc(schema.description));
    out.push(
      `export const ${validatorName(name)}: z.ZodType<Schemas[${JSON.stringify(name)}]> = ${code};`,
      '',
    );
  }

  // The frames of each event stream tagged by `event`: one strict object per frame kind.
  for (const { op, frames } of frameStreams) {
    const name = validatorName(frameTypeName(op.operationId));
    if (order.some((component) => validatorName(component) === name)) {
      throw new Error(`${op.operationId}: the frame validator ${name} would shadow a component's`);
    }
    const parts = frames.map(
      ({ event, name: data }) =>
        `  z.strictObject({\n    event: z.literal(${JSON.stringify(event)}),\n    data: ${validatorName(data)},\n  }),`,
    );
    out.push(
      frameDoc(op),
      `export const ${name}: z.ZodType<${frameTypeName(op.operationId)}> = z.discriminatedUnion("event", [`,
      ...parts,
      ']);',
      '',
    );
  }

  // The maps are annotated with `typeof` each const, so declarations stay compact.
  const map = (doc, name, entries) => {
    out.push(doc, `export const ${name}: {`);
    for (const [key, , type] of entries) out.push(`  readonly ${key}: ${type};`);
    out.push('} = {');
    for (const [key, value] of entries) out.push(`  ${key}: ${value},`);
    out.push('};', '');
  };
  const ref = (component) => [validatorName(component), `typeof ${validatorName(component)}`];

  map(
    '/** Every generated validator, by the name of its schema in the OpenAPI document. */',
    'schemas',
    order.map((name) => [name, ...ref(name)]),
  );
  map(
    [
      '/**',
      " * The validator of each operation's success body, by operationId: `null` when the",
      ' * operation answers no body (204), bytes (a file, an archive) or only streams (see',
      ' * `streamSchemas`); `z.unknown()` when the spec gives the body no schema.',
      ' */',
    ].join('\n'),
    'responseSchemas',
    ops.map((op) => {
      const found = responseRoots[op.operationId];
      if (found.kind === 'ref') return [op.operationId, ...ref(found.name)];
      if (found.kind === 'any') return [op.operationId, 'z.unknown()', 'z.ZodUnknown'];
      return [op.operationId, 'null', 'null'];
    }),
  );
  map(
    "/** The validator of one frame's `data` for each streaming operation, by operationId. */",
    'streamSchemas',
    Object.entries(streamRoots).map(([id, name]) => [id, ...ref(name)]),
  );
  map(
    [
      '/**',
      ' * The validator of a whole decoded frame (`{ event, data }`, `data` parsed from JSON) for',
      ' * each operation whose event stream tags its frames by `event`, by operationId.',
      ' */',
    ].join('\n'),
    'streamFrameSchemas',
    frameStreams.map(({ op }) => {
      const name = validatorName(frameTypeName(op.operationId));
      return [op.operationId, name, `typeof ${name}`];
    }),
  );
  return out.join('\n');
}

/**
 * Generates the route table: method and path template of every operation.
 * @param {any} spec
 * @param {{ header: string }} options
 */
export function emitRoutes(spec, { header }) {
  const out = [header, "import type { operations } from './openapi.js';", ''];
  out.push('/** The HTTP method and path template of an operation. */');
  out.push('export interface Route {');
  out.push('  /** HTTP method. */');
  out.push("  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';");
  out.push('  /** Path template, `{name}` for path parameters. */');
  out.push('  readonly path: string;');
  out.push('}', '');
  out.push('/** Every operation of the OpenAPI document, by operationId. */');
  out.push('export const routes = {');
  for (const op of operations(spec)) {
    out.push(
      `  ${op.operationId}: { method: ${JSON.stringify(op.method.toUpperCase())}, path: ${JSON.stringify(op.path)} },`,
    );
  }
  out.push('} as const satisfies { readonly [K in keyof operations]: Route };', '');
  return out.join('\n');
}

/**
 * Generates the frame types of event streams tagged by `event` (types only: the inline
 * entry may use them).
 * @param {any} spec
 * @param {{ header: string }} options
 */
export function emitStreams(spec, { header }) {
  const streams = [];
  for (const op of operations(spec)) {
    const stream = successSchema(op).stream;
    if (stream?.kind === 'frames') streams.push({ op, frames: stream.frames });
  }
  const out = [header];
  if (streams.length > 0) out.push("import type { components } from './openapi.js';", '', 'type Schemas = components["schemas"];', '');
  for (const { op, frames } of streams) {
    out.push(frameDoc(op), `export type ${frameTypeName(op.operationId)} =`);
    frames.forEach(({ event, name }, i) => {
      const end = i === frames.length - 1 ? ';' : '';
      out.push(`  | { event: ${JSON.stringify(event)}; data: Schemas[${JSON.stringify(name)}] }${end}`);
    });
    out.push('');
  }
  out.push(
    '/** The frame type of each operation whose event stream tags its frames by `event`, by operationId. */',
    'export interface StreamFrames {',
    ...streams.map(({ op }) => `  ${op.operationId}: ${frameTypeName(op.operationId)};`),
    '}',
    '',
  );
  return out.join('\n');
}

/** `installAgent` → `InstallAgentFrame`. */
export const frameTypeName = (operationId) => `${operationId[0].toUpperCase()}${operationId.slice(1)}Frame`;

function frameDoc(op) {
  return doc(
    `A frame of the event stream \`${op.method.toUpperCase()} ${op.path}\` answers with \`Accept: text/event-stream\`\n` +
      `(operation \`${op.operationId}\`), its \`data\` decoded from JSON; tagged by \`event\`.`,
  );
}

/** The operations of the document, in document order. */
export function operations(spec) {
  const list = [];
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
      const op = item[method];
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      list.push({ ...op, method, path });
    }
  }
  return list;
}

/**
 * What an operation answers on success: `json` is a component, any JSON, or nothing (no
 * body, or bytes: see `isBytes`; or a switch to the WebSocket protocol, `101` alone, which
 * has no body); `stream` (when it offers `text/event-stream`) is one frame shape whose
 * `data` is a component, or frames tagged by `event`. Several success statuses (`201`
 * stored, `200` replaced) must answer the same content: the client returns the body, not
 * the status.
 */
function successSchema(op) {
  const codes = Object.keys(op.responses ?? {}).filter((c) => SUCCESS.includes(c));
  if (codes.length === 0 && op.responses?.['101']) {
    if (op.responses['101'].content) throw new Error(`${op.operationId}: a 101 (Switching Protocols) with content`);
    return { json: { kind: 'none' }, stream: undefined };
  }
  if (codes.length === 0) throw new Error(`${op.operationId}: no success status`);
  // A bodiless 204 beside a status with content (a stream with nothing to resume:
  // `uiMessageStream`) is the method's `null`; the other statuses say what it answers.
  const answering =
    codes.length > 1 && codes.includes('204') && !op.responses['204'].content ? codes.filter((c) => c !== '204') : codes;
  const contents = answering.map((c) => JSON.stringify(op.responses[c].content ?? {}));
  if (new Set(contents).size !== 1) {
    throw new Error(`${op.operationId}: the success statuses ${codes.join(', ')} answer different content`);
  }
  const content = op.responses[answering[0]].content ?? {};
  const bytes = Object.keys(content).filter((type) => isBytes(content[type].schema));
  const unknown = Object.keys(content).filter(
    (type) => type !== 'application/json' && type !== 'text/event-stream' && !bytes.includes(type),
  );
  if (unknown.length) throw new Error(`${op.operationId}: unsupported success content ${unknown.join(', ')}`);
  if (bytes.length && Object.keys(content).length > bytes.length) {
    throw new Error(`${op.operationId}: a success answering bytes (${bytes.join(', ')}) beside other content`);
  }
  let json = { kind: 'none' };
  if (content['application/json']) {
    const schema = content['application/json'].schema;
    if (!schema || Object.keys(schema).length === 0) json = { kind: 'any' };
    else if (typeof schema.$ref === 'string') json = { kind: 'ref', name: refName(schema.$ref, op.operationId) };
    else throw new Error(`${op.operationId}: the success body must be a $ref to a component`);
  }
  const stream = content['text/event-stream'] ? eventStream(op, content['text/event-stream']) : undefined;
  return { json, stream };
}

/**
 * Whether a body's schema says "bytes" (a file's content, a tar.gz): a binary string
 * (`type: string, format: binary`) or an array of byte integers (how utoipa writes a
 * `Vec<u8>`). Such a body (`application/octet-stream`, `application/gzip`, ...) is read as
 * bytes, never as JSON: it gets no validator.
 */
function isBytes(schema) {
  if (!schema || typeof schema !== 'object') return false;
  if (schema.type === 'string') return schema.format === 'binary';
  const items = schema.items;
  return (
    schema.type === 'array' &&
    items?.type === 'integer' &&
    items.minimum === 0 &&
    Object.keys(schema).every((k) => k === 'type' || k === 'items' || ANNOTATIONS.has(k)) &&
    Object.keys(items).every((k) => ['type', 'minimum', 'maximum'].includes(k) || ANNOTATIONS.has(k))
  );
}

/**
 * The frames of an event stream, as its `itemSchema` describes them; `{ kind: 'text' }` for a
 * stream described only as a string (no frame shape to type or check).
 */
function eventStream(op, media) {
  const where = `${op.operationId}: text/event-stream itemSchema`;
  const item = media.itemSchema;
  if (item === undefined && isText(media.schema)) return { kind: 'text' };
  if (!item || typeof item !== 'object') throw new Error(`${where} is missing`);
  if (!item.oneOf) return { kind: 'data', name: frameData(item, where) };
  const others = Object.keys(item).filter((k) => k !== 'oneOf' && !ANNOTATIONS.has(k));
  if (others.length) throw new Error(`${where}: oneOf beside ${others.join(', ')}`);
  const frames = item.oneOf.map((branch, i) => {
    const at = `${where}/oneOf/${i}`;
    const keys = Object.keys(branch).filter((k) => !['type', 'properties', 'required'].includes(k) && !ANNOTATIONS.has(k));
    if (keys.length) throw new Error(`${at}: unsupported keyword \`${keys[0]}\``);
    const props = Object.keys(branch.properties ?? {}).filter((k) => k !== 'event' && k !== 'data');
    if (props.length) throw new Error(`${at}: a tagged frame has only \`event\` and \`data\`, not \`${props[0]}\``);
    const event = tagValue(branch.properties?.event);
    if (event === undefined || !(branch.required ?? []).includes('event')) {
      throw new Error(`${at}: \`event\` must be a required constant`);
    }
    return { event, name: frameData(branch, at) };
  });
  if (new Set(frames.map((f) => f.event)).size !== frames.length) throw new Error(`${where}: two frames share an \`event\``);
  return { kind: 'frames', frames };
}

/** Whether a schema is a plain string (annotations aside): text whose frames it does not describe. */
function isText(schema) {
  return (
    !!schema &&
    typeof schema === 'object' &&
    schema.type === 'string' &&
    Object.keys(schema).every((k) => k === 'type' || (ANNOTATIONS.has(k) && k !== 'format'))
  );
}

/** The component a frame's `data` carries as JSON. */
function frameData(frame, where) {
  const data = frame.properties?.data;
  if (frame.type !== 'object' || !(frame.required ?? []).includes('data')) {
    throw new Error(`${where}: a frame must be an object with a required \`data\``);
  }
  if (data?.contentMediaType !== 'application/json' || typeof data?.contentSchema?.$ref !== 'string') {
    throw new Error(`${where}: \`data\` must be application/json with a contentSchema $ref`);
  }
  return refName(data.contentSchema.$ref, where);
}

function refName(ref, where) {
  if (!ref.startsWith(REF_PREFIX)) throw new Error(`${where}: unsupported $ref ${ref}`);
  return ref.slice(REF_PREFIX.length);
}

/** The components reachable from `roots`, dependencies first (alphabetical among equals). */
function closure(roots, components) {
  const order = [];
  const state = new Map(); // name -> 'visiting' | 'done'
  const visit = (name, from) => {
    if (!components[name]) throw new Error(`${from}: no component ${name}`);
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new Error(`recursive schema ${name}: not supported yet`);
    state.set(name, 'visiting');
    for (const dep of [...refsOf(components[name])].sort()) visit(dep, name);
    state.set(name, 'done');
    order.push(name);
  };
  for (const root of [...roots].sort()) visit(root, 'root');
  return order;
}

function refsOf(schema, found = new Set()) {
  if (Array.isArray(schema)) {
    for (const s of schema) refsOf(s, found);
  } else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' && typeof value === 'string') found.add(refName(value, 'schema'));
      else if (key !== 'examples' && key !== 'example' && key !== 'default') refsOf(value, found);
    }
  }
  return found;
}

function doc(description) {
  if (!description) return '/** (no description in the spec) */';
  const lines = description.replaceAll('*/', '*\\/').split('\n');
  if (lines.length === 1) return `/** ${lines[0]} */`;
  return ['/**', ...lines.map((l) => ` * ${l}`.trimEnd()), ' */'].join('\n');
}

const pad = (depth) => '  '.repeat(depth);

/** Whether a `propertyNames` schema allows every key (keys are strings anyway). */
function isStringKeys(names) {
  return names && typeof names === 'object' && Object.keys(names).length === 1 && names.type === 'string';
}

function check(schema, ctx) {
  if (schema === true || (schema && typeof schema === 'object' && Object.keys(schema).length === 0)) return;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new Error(`${ctx.pointer}: not a schema object`);
  }
  for (const key of Object.keys(schema)) {
    // `propertyNames: {type: string}` (a map keyed by strings) says what JSON keys are.
    if (key === 'propertyNames' && isStringKeys(schema[key])) continue;
    if (!SUPPORTED.has(key)) throw new Error(`${ctx.pointer}: unsupported keyword \`${key}\``);
  }
  if (schema.format !== undefined && !FORMATS.has(schema.format)) {
    throw new Error(`${ctx.pointer}: unsupported format \`${schema.format}\``);
  }
  if (schema.$ref !== undefined) {
    const extra = Object.keys(schema).filter((k) => k !== '$ref' && !ANNOTATIONS.has(k));
    if (extra.length) throw new Error(`${ctx.pointer}: $ref beside ${extra.join(', ')}`);
  }
}

/** The zod expression validating `schema`. */
function expr(schema, ctx, depth) {
  check(schema, ctx);
  if (schema === true || Object.keys(schema).every((k) => ANNOTATIONS.has(k) && k !== 'format')) {
    return 'z.unknown()';
  }
  if (schema.$ref) return validatorName(refName(schema.$ref, ctx.pointer));
  if (schema.allOf) return allOf(schema, ctx, depth);
  if (schema.oneOf || schema.anyOf) return oneOf(schema, ctx, depth);
  if (schema.const !== undefined) return `z.literal(${JSON.stringify(schema.const)})`;

  const types = schema.type === undefined ? [] : [schema.type].flat();
  const nullable = types.includes('null') || (schema.enum ?? []).includes(null);
  const base = types.filter((t) => t !== 'null');
  let code;
  if (schema.enum) {
    const values = schema.enum.filter((v) => v !== null);
    if (!values.every((v) => typeof v === 'string')) throw new Error(`${ctx.pointer}: non-string enum`);
    code = values.length === 1 ? `z.literal(${JSON.stringify(values[0])})` : `z.enum(${JSON.stringify(values)})`;
  } else if (base.length === 0 && nullable) {
    return 'z.null()';
  } else if (base.length === 1) {
    code = typed(base[0], schema, ctx, depth);
  } else if (base.length > 1) {
    code = `z.union([${base.map((t) => typed(t, schema, ctx, depth)).join(', ')}])`;
  } else {
    throw new Error(`${ctx.pointer}: a schema without type, enum, const, $ref or composition`);
  }
  return nullable ? `${code}.nullable()` : code;
}

function typed(type, schema, ctx, depth) {
  switch (type) {
    case 'string': {
      let code = schema.format === 'date-time' ? 'z.iso.datetime({ offset: true })' : 'z.string()';
      if (schema.minLength !== undefined) code += `.min(${schema.minLength})`;
      if (schema.maxLength !== undefined) code += `.max(${schema.maxLength})`;
      if (schema.pattern !== undefined) code += `.regex(new RegExp(${JSON.stringify(schema.pattern)}))`;
      return code;
    }
    case 'integer':
    case 'number': {
      let code = type === 'integer' ? 'z.number().int()' : 'z.number()';
      if (schema.minimum !== undefined) code += `.min(${schema.minimum})`;
      if (schema.maximum !== undefined) code += `.max(${schema.maximum})`;
      return code;
    }
    case 'boolean':
      return 'z.boolean()';
    case 'array': {
      const items = schema.items === undefined ? 'z.unknown()' : expr(schema.items, sub(ctx, 'items'), depth);
      let code = `z.array(${items})`;
      if (schema.minItems !== undefined) code += `.min(${schema.minItems})`;
      if (schema.maxItems !== undefined) code += `.max(${schema.maxItems})`;
      return code;
    }
    case 'object':
      return object(schema.properties ?? {}, schema.required ?? [], schema.additionalProperties, ctx, depth);
    default:
      throw new Error(`${ctx.pointer}: unsupported type \`${type}\``);
  }
}

function sub(ctx, ...segments) {
  return { ...ctx, pointer: `${ctx.pointer}/${segments.join('/')}` };
}

function object(properties, required, additional, ctx, depth) {
  if (additional !== undefined && additional !== false && additional !== true) {
    // A map: string keys, each value of one schema (e.g. `BTreeMap<String, T>`).
    if (Object.keys(properties).length || required.length) {
      throw new Error(`${ctx.pointer}: additionalProperties with a schema beside properties is not supported`);
    }
    return `z.record(z.string(), ${expr(additional, sub(ctx, 'additionalProperties'), depth)})`;
  }
  for (const name of required) {
    if (!(name in properties)) throw new Error(`${ctx.pointer}: required \`${name}\` has no schema`);
  }
  const ctor = additional === false ? 'z.strictObject' : 'z.looseObject';
  const entries = Object.entries(properties);
  if (entries.length === 0) return `${ctor}({})`;
  const lines = entries.map(([name, prop]) => {
    let code = expr(prop, sub(ctx, 'properties', name), depth + 1);
    if (!required.includes(name)) code += '.optional()';
    const comment = prop.description ? `${pad(depth + 1)}${doc(prop.description).split('\n').join(`\n${pad(depth + 1)}`)}\n` : '';
    return `${comment}${pad(depth + 1)}${JSON.stringify(name)}: ${code},`;
  });
  return `${ctor}({\n${lines.join('\n')}\n${pad(depth)}})`;
}

/** Resolves a `$ref` (one level) for structural questions. */
function resolve(schema, ctx) {
  return schema.$ref ? ctx.components[refName(schema.$ref, ctx.pointer)] : schema;
}

/** The tag property shared by every branch of `branches` (objects with a required constant), if any. */
function discriminator(branches, ctx) {
  const objects = branches.map((b) => resolve(b, ctx));
  if (objects.length < 2 || !objects.every((o) => o.type === 'object' && o.properties)) return undefined;
  const candidates = Object.keys(objects[0].properties).filter((key) =>
    objects.every((o) => (o.required ?? []).includes(key) && tagValue(o.properties[key]) !== undefined),
  );
  for (const key of candidates) {
    const values = objects.map((o) => tagValue(o.properties[key]));
    if (new Set(values).size === values.length) return key;
  }
  return undefined;
}

function tagValue(prop) {
  if (!prop) return undefined;
  if (typeof prop.const === 'string') return prop.const;
  if (Array.isArray(prop.enum) && prop.enum.length === 1 && typeof prop.enum[0] === 'string') return prop.enum[0];
  return undefined;
}

function oneOf(schema, ctx, depth) {
  const key = schema.oneOf ? 'oneOf' : 'anyOf';
  const members = schema[key];
  const others = Object.keys(schema).filter((k) => k !== key && !ANNOTATIONS.has(k));
  if (others.length) throw new Error(`${ctx.pointer}: ${key} beside ${others.join(', ')}`);
  const isNull = (m) => m.type === 'null' && Object.keys(m).every((k) => k === 'type' || ANNOTATIONS.has(k));
  const rest = members.filter((m) => !isNull(m));
  const nullable = rest.length !== members.length;
  let code;
  if (rest.length === 1) {
    code = expr(rest[0], sub(ctx, key, String(members.indexOf(rest[0]))), depth);
  } else {
    const tag = discriminator(rest, ctx);
    const parts = rest.map((m, i) => `${pad(depth + 1)}${expr(m, sub(ctx, key, String(i)), depth + 1)},`);
    code = tag
      ? `z.discriminatedUnion(${JSON.stringify(tag)}, [\n${parts.join('\n')}\n${pad(depth)}])`
      : `z.union([\n${parts.join('\n')}\n${pad(depth)}])`;
  }
  return nullable ? `${code}.nullable()` : code;
}

function allOf(schema, ctx, depth) {
  const others = Object.keys(schema).filter((k) => k !== 'allOf' && !ANNOTATIONS.has(k));
  if (others.length) throw new Error(`${ctx.pointer}: allOf beside ${others.join(', ')}`);
  const members = schema.allOf.map((m) => resolve(m, ctx));
  const unions = members.filter((m) => m.oneOf && discriminator(m.oneOf, ctx));
  const plain = members.filter((m) => m.type === 'object' && !m.oneOf && !m.anyOf && !m.allOf);
  if (unions.length === 1 && unions.length + plain.length === members.length) {
    // Distribute the plain objects over the union's branches: one tagged union of objects,
    // each branch spreading the shared shape (hoisted into a const before the validator).
    const union = unions[0];
    const tag = discriminator(union.oneOf, ctx);
    const shared = {};
    const sharedRequired = [];
    for (const p of plain) {
      for (const [name, prop] of Object.entries(p.properties ?? {})) {
        if (name in shared) throw new Error(`${ctx.pointer}: allOf members both define \`${name}\``);
        shared[name] = prop;
      }
      sharedRequired.push(...(p.required ?? []));
    }
    const shapeName = `${ctx.component}Shape`;
    const shape = object(shared, sharedRequired, undefined, sub(ctx, 'allOf'), 0).replace(/^z\.looseObject\(/, '').replace(/\)$/, '');
    ctx.prelude.push(`/** The members every \`${ctx.component}\` has besides its \`${tag}\`-tagged payload. */\nconst ${shapeName} = ${shape};\n`);
    const parts = union.oneOf.map((b, i) => {
      const branch = resolve(b, ctx);
      for (const name of Object.keys(branch.properties ?? {})) {
        if (name in shared) throw new Error(`${ctx.pointer}: allOf members both define \`${name}\``);
      }
      const strict = [branch, ...plain].some((m) => m.additionalProperties === false);
      const bctx = sub(ctx, 'allOf', String(members.indexOf(union)), 'oneOf', String(i));
      const own = object(branch.properties ?? {}, branch.required ?? [], strict ? false : undefined, bctx, depth + 1);
      return `${pad(depth + 1)}${own.replace(/\n(\s*)\}\)$/, `\n$1  ...${shapeName},\n$1})`)},`;
    });
    return `z.discriminatedUnion(${JSON.stringify(tag)}, [\n${parts.join('\n')}\n${pad(depth)}])`;
  }
  const parts = schema.allOf.map((m, i) => expr(m, sub(ctx, 'allOf', String(i)), depth));
  return parts.reduce((acc, part) => `z.intersection(${acc}, ${part})`);
}
