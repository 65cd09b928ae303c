//! The spans of a match (docs/observability.md, ADR 0008). The worker opens a `match` span when it
//! claims the match: the root of that match's trace, named by its league, round, match, players and game
//! type. Inside it the runner opens one span per phase — `invite`, `collect`, `draw`, `game_over` — and
//! the worker a `report` span; every call to a player or the manager is made inside one, so the player
//! host's and the manager's server spans are their children. The runner records the conversation and
//! the outcome on the `match` span.
//!
//! A failure is a span error (`otel.status_code = "ERROR"`): a miss (timeout, unreachable or refusing
//! player, invalid move) on its phase, even if a later attempt succeeds; a technical loss or double
//! forfeit on the match; a report that does not go through on `report`.

use league_domain::Assignment;
use league_proto::v2::{MatchResult, ResultStatus};
use tracing::Span;
use tracing::field::Empty;

/// The root span of `assignment`'s match, run by `referee_id`.
pub fn match_span(assignment: &Assignment, referee_id: &str) -> Span {
    let scheduled = &assignment.scheduled;
    tracing::info_span!(
        parent: None,
        "match",
        league_id = %scheduled.league_id,
        round_id = scheduled.round_id,
        match_id = %scheduled.match_id,
        game_type = %scheduled.game_type,
        player_a_id = %scheduled.player_a_id,
        player_b_id = %scheduled.player_b_id,
        referee_id,
        conversation_id = Empty,
        outcome = Empty,
        winner_id = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// The outcome of a match, as metrics and spans name it: `win`, `draw`, `technical_loss`,
/// `double_forfeit`.
pub fn outcome_name(result: &MatchResult) -> &'static str {
    match result.status() {
        ResultStatus::Win => "win",
        ResultStatus::Draw => "draw",
        ResultStatus::TechnicalLoss => "technical_loss",
        ResultStatus::DoubleForfeit => "double_forfeit",
        ResultStatus::Unspecified => "unspecified",
    }
}

/// Writes `result` onto the `match` span (the current span when the runner is run by the worker).
pub(crate) fn record_outcome(span: &Span, result: &MatchResult) {
    span.record("outcome", outcome_name(result));
    if !result.winner_player_id.is_empty() {
        span.record("winner_id", result.winner_player_id.as_str());
    }
    if matches!(
        result.status(),
        ResultStatus::TechnicalLoss | ResultStatus::DoubleForfeit
    ) {
        record_error(span, &result.reason);
    }
}

/// Marks `span` as failed because of `description`.
pub(crate) fn record_error(span: &Span, description: &str) {
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", description);
}
