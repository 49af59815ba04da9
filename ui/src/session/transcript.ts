/**
 * A session's transcript, folded from its event log: items with their streamed text, turns,
 * and what waits for the user (permissions, questions, host tool calls). Events are applied
 * in sequence order, each exactly once: one already applied (a replay after a reconnect or
 * a reload) is ignored, and a gap is refused, so what is shown is the log, no more, no less.
 */

import type {
  ChangeCounts,
  Item,
  PermissionRequest,
  PermissionResolved,
  QuestionRequest,
  QuestionResolved,
  ToolCallRequest,
  ToolCallResolved,
  TurnEnded,
  UniversalEvent,
} from '../api.js';

/** One item as shown: the latest known item, and the text its deltas streamed so far. */
export interface ItemState {
  /** The item as last started or completed. */
  item: Item;
  /** Text appended by `itemDelta`s (message or reasoning text, command output). */
  streamed: string;
  /** The turn it belongs to, if any. */
  turnId: string | undefined;
  /** Items whose `parentId` is this one (e.g. a tool call's result). */
  children: string[];
}

/** A permission request and, once answered, how. */
export interface PermissionState {
  request: PermissionRequest;
  resolved: PermissionResolved | undefined;
  turnId: string | undefined;
}

/** A question request and, once answered, how. */
export interface QuestionState {
  request: QuestionRequest;
  resolved: QuestionResolved | undefined;
  turnId: string | undefined;
}

/** A host tool call and, once answered, how. */
export interface ToolCallState {
  request: ToolCallRequest;
  resolved: ToolCallResolved | undefined;
}

/** A turn: when it started and how it ended. */
export interface TurnState {
  turnId: string;
  ended: TurnEnded | undefined;
}

/** One entry of the transcript, in log order. */
export type Entry =
  | { kind: 'sessionStarted'; sequence: number; event: Extract<UniversalEvent, { type: 'sessionStarted' }> }
  | { kind: 'sessionEnded'; sequence: number; event: Extract<UniversalEvent, { type: 'sessionEnded' }> }
  | { kind: 'handedOver'; sequence: number; event: Extract<UniversalEvent, { type: 'sessionHandedOver' }> }
  | { kind: 'turnStarted'; sequence: number; turnId: string }
  | { kind: 'turnEnded'; sequence: number; turnId: string; ended: TurnEnded }
  | { kind: 'item'; sequence: number; itemId: string }
  | { kind: 'permission'; sequence: number; permissionId: string }
  | { kind: 'question'; sequence: number; questionId: string }
  | { kind: 'toolCall'; sequence: number; callId: string }
  | { kind: 'error'; sequence: number; event: Extract<UniversalEvent, { type: 'error' }> }
  | { kind: 'unknown'; sequence: number; event: Extract<UniversalEvent, { type: 'unknown' }> };

/** Thrown when an event does not follow the last one applied. */
export class GapError extends Error {}

/** The transcript of one session, built by [`Transcript.apply`]. */
export class Transcript {
  /** The last sequence applied (0 before any). */
  lastSequence = 0;
  /** Every event applied, in order (for the raw view). */
  readonly events: UniversalEvent[] = [];
  /** The entries, in log order. */
  readonly entries: Entry[] = [];
  /** Items by id. */
  readonly items = new Map<string, ItemState>();
  /** Permission requests by id. */
  readonly permissions = new Map<string, PermissionState>();
  /** Question requests by id. */
  readonly questions = new Map<string, QuestionState>();
  /** Host tool calls by id. */
  readonly toolCalls = new Map<string, ToolCallState>();
  /** Turns by id. */
  readonly turns = new Map<string, TurnState>();
  /** The running turn, if any. */
  currentTurn: string | undefined;
  /** Whether `sessionEnded` was applied. */
  ended = false;

  /**
   * Applies one event. Returns false (and changes nothing) for an event already applied;
   * throws [`GapError`] for one that skips a sequence.
   */
  apply(event: UniversalEvent): boolean {
    if (event.sequence <= this.lastSequence) return false;
    if (event.sequence !== this.lastSequence + 1) {
      throw new GapError(`event ${event.sequence} follows event ${this.lastSequence}: the log has a gap`);
    }
    this.lastSequence = event.sequence;
    this.events.push(event);
    const sequence = event.sequence;
    const turnId = this.currentTurn;
    switch (event.type) {
      case 'sessionStarted':
        this.entries.push({ kind: 'sessionStarted', sequence, event });
        break;
      case 'sessionEnded':
        this.ended = true;
        this.currentTurn = undefined;
        this.entries.push({ kind: 'sessionEnded', sequence, event });
        break;
      case 'sessionHandedOver':
        this.entries.push({ kind: 'handedOver', sequence, event });
        break;
      case 'turnStarted':
        this.currentTurn = event.data.turnId;
        this.turns.set(event.data.turnId, { turnId: event.data.turnId, ended: undefined });
        this.entries.push({ kind: 'turnStarted', sequence, turnId: event.data.turnId });
        break;
      case 'turnEnded': {
        const turn = this.turns.get(event.data.turnId) ?? { turnId: event.data.turnId, ended: undefined };
        turn.ended = event.data;
        this.turns.set(turn.turnId, turn);
        if (this.currentTurn === event.data.turnId) this.currentTurn = undefined;
        this.entries.push({ kind: 'turnEnded', sequence, turnId: event.data.turnId, ended: event.data });
        break;
      }
      case 'itemStarted':
      case 'itemCompleted': {
        const item = event.data.item;
        const known = this.items.get(item.itemId);
        if (known) {
          known.item = item;
        } else {
          this.items.set(item.itemId, { item, streamed: '', turnId, children: [] });
          const parent = item.parentId ? this.items.get(item.parentId) : undefined;
          if (parent) parent.children.push(item.itemId);
          else this.entries.push({ kind: 'item', sequence, itemId: item.itemId });
        }
        break;
      }
      case 'itemDelta': {
        const known = this.items.get(event.data.itemId);
        if (known) known.streamed += event.data.delta;
        break;
      }
      case 'permissionAsked':
        this.permissions.set(event.data.permissionId, { request: event.data, resolved: undefined, turnId });
        this.entries.push({ kind: 'permission', sequence, permissionId: event.data.permissionId });
        break;
      case 'permissionResolved': {
        const known = this.permissions.get(event.data.permissionId);
        if (known) known.resolved = event.data;
        else if (event.data.request) {
          // Answered by the daemon itself: never asked, shown as it was decided.
          this.permissions.set(event.data.permissionId, { request: event.data.request, resolved: event.data, turnId });
          this.entries.push({ kind: 'permission', sequence, permissionId: event.data.permissionId });
        }
        break;
      }
      case 'questionAsked':
        this.questions.set(event.data.questionId, { request: event.data, resolved: undefined, turnId });
        this.entries.push({ kind: 'question', sequence, questionId: event.data.questionId });
        break;
      case 'questionResolved': {
        const known = this.questions.get(event.data.questionId);
        if (known) known.resolved = event.data;
        break;
      }
      case 'toolCallRequested':
        this.toolCalls.set(event.data.callId, { request: event.data, resolved: undefined });
        this.entries.push({ kind: 'toolCall', sequence, callId: event.data.callId });
        break;
      case 'toolCallResolved': {
        const known = this.toolCalls.get(event.data.callId);
        if (known) known.resolved = event.data;
        break;
      }
      case 'error':
        this.entries.push({ kind: 'error', sequence, event });
        break;
      case 'unknown':
        this.entries.push({ kind: 'unknown', sequence, event });
        break;
    }
    return true;
  }

  /** Permission requests still waiting for a reply, oldest first. */
  pendingPermissions(): PermissionRequest[] {
    return [...this.permissions.values()].filter((p) => !p.resolved && !this.ended).map((p) => p.request);
  }

  /** Question requests still waiting for a reply, oldest first. */
  pendingQuestions(): QuestionRequest[] {
    return [...this.questions.values()].filter((q) => !q.resolved && !this.ended).map((q) => q.request);
  }

  /** Host tool calls still waiting for a result, oldest first. */
  pendingToolCalls(): ToolCallRequest[] {
    return [...this.toolCalls.values()].filter((c) => !c.resolved && !this.ended).map((c) => c.request);
  }
}

/**
 * The text of an item: while in progress, what it started with and what streamed since;
 * once final, its own text (or reasoning) parts, or what streamed when it has none.
 */
export function itemText(state: ItemState): string {
  const parts = state.item.content ?? [];
  const text = parts
    .map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : ''))
    .join('');
  return state.item.status === 'inProgress' ? text + state.streamed : text || state.streamed;
}

/** "2 added, 1 modified" from a turn's change counts (empty for none). */
export function describeChanges(counts: ChangeCounts): string {
  const parts: string[] = [];
  if (counts.added) parts.push(`${counts.added} added`);
  if (counts.modified) parts.push(`${counts.modified} modified`);
  if (counts.deleted) parts.push(`${counts.deleted} deleted`);
  return parts.join(', ');
}
