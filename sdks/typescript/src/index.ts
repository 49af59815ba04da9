/**
 * `sandbox-daemon`: the typed client, the wire types and the generated validators
 * (zod 4, Standard Schema). `new SandboxDaemon({ ..., validate: true })` checks every
 * response body and event against the OpenAPI document.
 *
 * @module
 */

import * as z from 'zod';
import { SandboxDaemon as InlineSandboxDaemon } from './client.js';
import {
  LogChunkSchema,
  ProblemDetailsSchema,
  ProcessInfoSchema,
  responseSchemas,
  streamFrameSchemas,
  streamSchemas,
} from './generated/validators.js';
import type { ProcessLogFrame } from './processes.js';
import type { Validators } from './transport.js';

export * from './inline.js';
export * from './generated/validators.js';

/**
 * The validator of a decoded frame (`{ event, data }`) of a followed process log
 * (`followProcessLogs`). The OpenAPI document describes that stream in words only (no
 * `itemSchema`), so it is composed here of the generated `LogChunkSchema` and
 * `ProcessInfoSchema`; a `gap` frame's `{ from, to }` is the one shape written by hand.
 */
export const ProcessLogFrameSchema: z.ZodType<ProcessLogFrame> = z.discriminatedUnion('event', [
  z.strictObject({ event: z.literal('log'), data: LogChunkSchema }),
  z.strictObject({ event: z.literal('gap'), data: z.looseObject({ from: z.number().int().min(1), to: z.number().int().min(1) }) }),
  z.strictObject({ event: z.literal('exit'), data: ProcessInfoSchema }),
]);

/** The generated validators, as `validate: true` applies them. */
export const validators: Validators = {
  responses: responseSchemas,
  event: streamSchemas.streamEvents,
  problem: ProblemDetailsSchema,
  frames: { ...streamFrameSchemas, processLogs: ProcessLogFrameSchema },
};

/**
 * A client of one sandbox-daemon, with the generated validators behind `validate: true`.
 * Every OpenAPI operation is a method of the same name.
 */
export class SandboxDaemon extends InlineSandboxDaemon {
  /** The generated validators, used by `validate: true`. */
  protected static override readonly defaultValidators: Validators | undefined = validators;
}
