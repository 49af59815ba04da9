/**
 * Types derived from the generated wire types (src/generated/openapi.ts). Nothing here
 * restates a field: every type is computed from the OpenAPI document's types.
 *
 * @module
 */

import type { components, MessagePart, operations, UniversalEvent } from './generated/openapi.js';
import type { StreamFrames } from './generated/streams.js';

/** Every operationId of the OpenAPI document. */
export type OperationId = keyof operations;

/**
 * Every event `type`. `UniversalEvent` (generated) is a union tagged by `type`, so
 * `switch (event.type)` narrows `event.data` to that event's payload.
 */
export type EventType = UniversalEvent['type'];

/** The event of one `type`, e.g. `EventOf<'permissionAsked'>`. */
export type EventOf<T extends EventType> = Extract<UniversalEvent, { type: T }>;

/** The payload (`data`) of one event `type`. */
export type EventData<T extends EventType> = EventOf<T>['data'];

/** An RFC 7807 problem body as received: the spec's members plus any extension member. */
export type Problem = components['schemas']['ProblemDetails'] & { readonly [member: string]: unknown };

type Operation<K extends OperationId> = operations[K];
type SuccessStatus = 200 | 201 | 202 | 203 | 204;

/** The path parameters of an operation. */
export type PathParams<K extends OperationId> = Operation<K>['parameters'] extends { path: infer P } ? P : never;

/** The query parameters of an operation (`never` when it takes none). */
export type QueryParams<K extends OperationId> = NonNullable<Operation<K>['parameters']['query']>;

/** The JSON request body of an operation (`never` when it takes none). */
export type RequestBody<K extends OperationId> =
  NonNullable<Operation<K>['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body of an operation's success response (`void` when it answers none). */
export type ResponseBody<K extends OperationId> = {
  [S in keyof Operation<K>['responses'] & SuccessStatus]: Operation<K>['responses'][S] extends {
    content: { 'application/json': infer B };
  }
    ? B
    : void;
}[keyof Operation<K>['responses'] & SuccessStatus];

/** One array of selected option labels per question, in the questions' order. */
export type QuestionAnswers = RequestBody<'replyQuestion'>['answers'];

/**
 * A frame `installAgentProgress` yields: `progress` (`data`: an `InstallProgress`, tagged by
 * `phase`), then `installed` (`data`: the `InstallResponse`). The stream's `error` frame is
 * thrown as `ProblemError` instead.
 */
export type InstallFrame = Exclude<StreamFrames['installAgent'], { event: 'error' }>;

/** A text part of a message (`MessagePart` of `type: 'text'`). */
export type TextPart = Extract<MessagePart, { type: 'text' }>;

/** An image part of a message: `data` (base64) or `path` (a file in the working directory). */
export type ImagePart = Extract<MessagePart, { type: 'image' }>;

/** The image media types a message may carry (`image/png`, …). */
export type ImageMediaType = ImagePart['mediaType'];

/** A user message: text (sent as `message`), or parts (sent as `content`). */
export type MessageInput = string | readonly MessagePart[];
