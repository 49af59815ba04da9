//! The one rule for what is left open when a turn or a session ends — by the agent, a
//! cancel, a crash or the client: every pending permission, question and host tool call is
//! resolved as cancelled and every open item completes as failed, in that order, before `turnEnded`
//! (or `sessionEnded`). The daemon's core applies it to its state; the converter tests
//! apply it to a replay, so both close exactly what the core would.

use crate::{
    EventPayload, Item, ItemEvent, ItemStatus, PermissionOutcome, PermissionRequest,
    PermissionResolved, QuestionOutcome, QuestionRequest, QuestionResolved, ToolCallOutcome,
    ToolCallRequest, ToolCallResolved,
};

/// The events that close what is still open, in order.
pub fn close_open_work(
    items: &[Item],
    permissions: &[PermissionRequest],
    questions: &[QuestionRequest],
    tool_calls: &[ToolCallRequest],
) -> Vec<EventPayload> {
    let permissions = permissions.iter().map(|request| {
        EventPayload::PermissionResolved(PermissionResolved {
            permission_id: request.permission_id.clone(),
            outcome: PermissionOutcome::Cancelled,
            automatic: false,
            request: None,
        })
    });
    let questions = questions.iter().map(|request| {
        EventPayload::QuestionResolved(QuestionResolved {
            question_id: request.question_id.clone(),
            outcome: QuestionOutcome::Cancelled,
            answers: None,
        })
    });
    let tool_calls = tool_calls.iter().map(|call| {
        EventPayload::ToolCallResolved(ToolCallResolved {
            call_id: call.call_id.clone(),
            outcome: ToolCallOutcome::Cancelled,
        })
    });
    let items = items.iter().map(|item| {
        EventPayload::ItemCompleted(ItemEvent {
            item: Item {
                status: ItemStatus::Failed,
                ..item.clone()
            },
        })
    });
    permissions
        .chain(questions)
        .chain(tool_calls)
        .chain(items)
        .collect()
}
