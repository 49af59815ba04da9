/**
 * `sandbox-daemon`: the typed client, the wire types and the generated validators
 * (zod 4, Standard Schema). `new SandboxDaemon({ ..., validate: true })` checks every
 * response body and event against the OpenAPI document.
 *
 * @module
 */

import { SandboxDaemon as InlineSandboxDaemon } from './client.js';
import { ProblemDetailsSchema, responseSchemas, streamFrameSchemas, streamSchemas } from './generated/validators.js';
import type { Validators } from './transport.js';

export * from './inline.js';
export * from './generated/validators.js';

/** The generated validators, as `validate: true` applies them. */
export const validators: Validators = {
  responses: responseSchemas,
  event: streamSchemas.streamEvents,
  problem: ProblemDetailsSchema,
  frames: streamFrameSchemas,
};

/**
 * A client of one sandbox-daemon, with the generated validators behind `validate: true`.
 * Every OpenAPI operation is a method of the same name.
 */
export class SandboxDaemon extends InlineSandboxDaemon {
  /** The generated validators, used by `validate: true`. */
  protected static override readonly defaultValidators: Validators | undefined = validators;
}
