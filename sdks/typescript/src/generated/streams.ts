// Generated from ../../spec/openapi.json (sandbox-daemon 0.1.0) by scripts/zod-emitter.mjs.
// Do not edit: run `npm run generate`. `npm run check:generated` fails when this file is stale.

import type { components } from './openapi.js';

type Schemas = components["schemas"];

/**
 * A frame of the event stream `POST /agents/{agent}/install` answers with `Accept: text/event-stream`
 * (operation `installAgent`), its `data` decoded from JSON; tagged by `event`.
 */
export type InstallAgentFrame =
  | { event: "progress"; data: Schemas["InstallProgress"] }
  | { event: "installed"; data: Schemas["InstallResponse"] }
  | { event: "error"; data: Schemas["ProblemDetails"] };

/** The frame type of each operation whose event stream tags its frames by `event`, by operationId. */
export interface StreamFrames {
  installAgent: InstallAgentFrame;
}
