//! Checking question answers against the questions they answer.

use sandbox_universal::QuestionRequest;

use super::SessionError;

/// Answers must fit the questions: one array per question, one label unless multi-select,
/// and only offered labels unless custom answers are allowed.
pub(super) fn validate_answers(
    request: &QuestionRequest,
    answers: &[Vec<String>],
) -> Result<(), SessionError> {
    if answers.len() != request.questions.len() {
        return Err(SessionError::InvalidAnswers(format!(
            "question request `{}` has {} question(s) but {} answer array(s) were sent",
            request.question_id,
            request.questions.len(),
            answers.len()
        )));
    }
    for (index, (question, selected)) in request.questions.iter().zip(answers).enumerate() {
        if !question.multi_select && selected.len() > 1 {
            return Err(SessionError::InvalidAnswers(format!(
                "question {index} (`{}`) takes one answer, got {}",
                question.question,
                selected.len()
            )));
        }
        if question.allow_custom || question.options.is_empty() {
            continue;
        }
        if let Some(unknown) = selected
            .iter()
            .find(|label| !question.options.iter().any(|o| &o.label == *label))
        {
            let labels: Vec<&str> = question.options.iter().map(|o| o.label.as_str()).collect();
            return Err(SessionError::InvalidAnswers(format!(
                "`{unknown}` is not an option of question {index} (`{}`); options: {}",
                question.question,
                labels.join(", ")
            )));
        }
    }
    Ok(())
}
