/**
 * The Standard Schema v1 interface (standardschema.dev), written here from its published
 * specification so the client needs no package for it. zod 4, valibot 1 and ArkType
 * validators satisfy it structurally; the client only calls `~standard.validate`.
 *
 * @module
 */

/** A validator implementing Standard Schema v1. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The standard interface. */
  readonly '~standard': StandardSchemaProps<Input, Output>;
}

/** The properties of the `~standard` member. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  /** Version of the standard: 1. */
  readonly version: 1;
  /** The library that implements it (e.g. `zod`). */
  readonly vendor: string;
  /** Validates a value: synchronously or not. */
  readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
  /** The static input and output types, for inference only. */
  readonly types?: StandardTypes<Input, Output> | undefined;
}

/** The result of `validate`: a value, or issues. */
export type StandardResult<Output> = StandardSuccess<Output> | StandardFailure;

/** A successful validation. */
export interface StandardSuccess<Output> {
  /** The validated (possibly transformed) value. */
  readonly value: Output;
  /** Absent on success. */
  readonly issues?: undefined;
}

/** A failed validation. */
export interface StandardFailure {
  /** What is wrong, one issue per problem. */
  readonly issues: ReadonlyArray<StandardIssue>;
}

/** One validation issue. */
export interface StandardIssue {
  /** Human-readable description. */
  readonly message: string;
  /** Where in the value: keys and indexes from the root. */
  readonly path?: ReadonlyArray<PropertyKey | StandardPathSegment> | undefined;
}

/** A path segment given as an object. */
export interface StandardPathSegment {
  /** The key of the segment. */
  readonly key: PropertyKey;
}

/** Static types carried by a validator. */
export interface StandardTypes<Input = unknown, Output = Input> {
  /** Input type. */
  readonly input: Input;
  /** Output type. */
  readonly output: Output;
}

/** The output type of a Standard Schema validator. */
export type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];
