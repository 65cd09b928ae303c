//! `league probe <agent URL>`: for agent authors. Plays a short scripted exchange with a player agent —
//! every message a player receives: GAME_INVITATION, CHOOSE_PARITY_CALL, GAME_OVER, GAME_ERROR,
//! ROUND_ANNOUNCEMENT, LEAGUE_STANDINGS_UPDATE, ROUND_COMPLETED, LEAGUE_COMPLETED — and prints a
//! compliance report: the dialect it speaks, which messages it accepted, and what it got wrong, with the
//! rule for each.
//!
//! The messages are the gateway's own: the probe calls the agent through the gateway's `PlayerService`
//! bridge, exactly as a league does, and reads back the compliance warnings the gateway would record.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::Args;
use league_domain::{GameType, MessageType, PlayerId};
use league_gateway::bridge::client::AgentClient;
use league_gateway::bridge::external_agents::ExternalAgents;
use league_gateway::bridge::mcp_detect::McpDetection;
use league_gateway::bridge::outbound::is_not_implemented;
use league_gateway::bridge::{FallbackTimeouts, PlayerBridge, Replies};
use league_gateway::warning_buffer::WarningBuffer;
use league_manager_link::ManagerLink;
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::player_service_server::PlayerService;
use league_proto::v2::*;
use league_v2::compliance::{Mode, kinds};
use league_v2::dialect::Dialect;
use league_v2::sender::SenderForm;
use secrecy::SecretString;
use serde_json::{Value, json};

#[derive(Debug, Clone, Args)]
pub struct ProbeArgs {
    /// The agent's JSON-RPC endpoint, e.g. http://127.0.0.1:8101/mcp.
    pub url: String,
    /// How long the agent has for each message.
    #[arg(long, default_value = "5s", value_parser = humantime_serde::re::humantime::parse_duration)]
    pub timeout: Duration,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The id the probe gives the agent, and its opponent's.
const PLAYER: &str = "P01";
const OPPONENT: &str = "P02";
const LEAGUE: &str = "probe_league";
const MATCH: &str = "R1M1";

/// The dialects tried, in order, until the agent takes a GAME_INVITATION (the bridge also tries the
/// message-type names after each).
const DIALECTS: [Dialect; 5] = [
    Dialect::Canonical,
    Dialect::Receive,
    Dialect::HandleMessage,
    Dialect::McpMessage,
    Dialect::ToolsCall,
];

/// What the agent did with one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Accepted,
    /// No method for it in any dialect tried, or an answer saying it does not know the message.
    NotImplemented,
    /// Refused (any JSON-RPC error, over the sender, the token or the params), not reached, or answered
    /// wrongly.
    Refused,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::NotImplemented => "not_implemented",
            Verdict::Refused => "refused",
        }
    }

    /// What a compliance warning of `kind` says the agent did with the message, if it did not take it.
    fn of_warning(kind: &str) -> Option<Verdict> {
        match kind {
            kinds::UNIMPLEMENTED_NOTIFICATION => Some(Verdict::NotImplemented),
            kinds::REFUSED_NOTIFICATION_ANSWER
            | kinds::REFUSED_SENDER
            | kinds::REFUSED_AUTH
            | kinds::REFUSED_PARAMS
            | kinds::REFUSED_NOTIFICATION => Some(Verdict::Refused),
            _ => None,
        }
    }
}

/// One message of the exchange, as the agent took it.
#[derive(Debug)]
struct Step {
    message_type: &'static str,
    verdict: Verdict,
    /// Why, in the agent's own words where it gave any, when it did not take it.
    error: Option<String>,
    /// What it got wrong: (kind, example, rule).
    problems: Vec<(String, String, &'static str)>,
    /// What the probe cannot judge (the player id a reply names, when not the one the probe invited).
    notes: Vec<String>,
}

pub async fn probe(args: ProbeArgs) -> anyhow::Result<()> {
    let limit = args.timeout;
    let warnings = Arc::new(WarningBuffer::default());
    // The probe never reaches a manager: the agent is known to the bridge before any call.
    let manager_link = ManagerLink::new(
        league_runtime::grpc::channel("http://127.0.0.1:9")?,
        SecretString::from("probe"),
    );
    // An https agent is verified as the gateway would: the system's roots and LEAGUE_EXTRA_ROOTS.
    let tls: league_runtime::tls::TlsConfig = league_runtime::config::load()?;
    let bridge = PlayerBridge {
        agents: ExternalAgents::new(manager_link),
        client: AgentClient::new(&tls)?,
        replies: Arc::new(Replies::default()),
        warnings: warnings.clone(),
        mode: Mode::Lenient,
        public_url: "http://127.0.0.1:9/mcp".to_owned(),
        timeouts: FallbackTimeouts {
            game_over: limit,
            other: limit,
        },
        event_slots: Default::default(),
    };
    let mut steps = Vec::new();
    let mut dialect = None;
    let mut probed = None;
    // When no dialect works, the reason shown is the agent's first refusal: a dialect it understood
    // (-32001 over the token, say), not the last dialect's complaint about a call it could not read.
    let mut first_refusal = None;
    // What asking `initialize` learnt, under whichever dialect's call made the bridge ask: each
    // candidate is a fresh agent, and an MCP server that refuses every call (our token, say) is still one.
    let mut mcp = None;
    for candidate in DIALECTS {
        let agent = bridge.agents.remember(
            // PLAYER, the first player's id.
            PlayerId::numbered(NonZeroU32::MIN).into(),
            args.url.clone(),
            candidate,
            SenderForm::Bare,
        );
        let invited = bridge.invite_to_match(tonic::Request::new(invitation(limit)));
        let (step, _) = run(MessageType::GameInvitation.as_str(), &warnings, invited).await;
        if mcp.is_none() {
            mcp = agent.mcp_detection().cloned();
        }
        let last = candidate == DIALECTS[DIALECTS.len() - 1];
        if step.verdict == Verdict::Accepted || last {
            dialect = (step.verdict == Verdict::Accepted).then(|| agent.dialect());
            probed = Some(agent);
            steps.push(match first_refusal {
                Some(refusal) if dialect.is_none() => refusal,
                _ => step,
            });
            break;
        }
        if step.verdict == Verdict::Refused && first_refusal.is_none() {
            first_refusal = Some(step);
        }
    }
    if dialect.is_some() {
        let asked = bridge.request_move(tonic::Request::new(move_call(limit)));
        let (mut step, answer) = run(MessageType::ChooseParityCall.as_str(), &warnings, asked).await;
        let choice = answer
            .and_then(|answer| answer.move_payload)
            .map(|payload| league_v2::convert::from_struct(&payload))
            .map(|payload| payload["parity_choice"].clone());
        if let Some(choice) = choice.filter(|c| *c != json!("even") && *c != json!("odd")) {
            step.refuse(format!("parity_choice {choice}"), RULE_PARITY);
        }
        steps.push(step);
        let over = bridge.notify_game_over(tonic::Request::new(game_over()));
        steps.push(run(MessageType::GameOver.as_str(), &warnings, over).await.0);
        let error = bridge.notify_game_error(tonic::Request::new(game_error()));
        steps.push(run(MessageType::GameError.as_str(), &warnings, error).await.0);
        for (message_type, event) in events() {
            let request = NotifyLeagueEventRequest {
                player_id: PLAYER.to_owned(),
                league_id: LEAGUE.to_owned(),
                event_id: format!("probe-{}", message_type.to_ascii_lowercase()),
                event: Some(event),
            };
            let notified = bridge.notify_league_event(tonic::Request::new(request));
            steps.push(run(message_type, &warnings, notified).await.0);
        }
    }
    // The manager's sender as the agent took it (the bridge tries the other form when refused over it).
    let form = probed.as_ref().map(|agent| agent.sender_form());
    let mcp = probed
        .as_ref()
        .and_then(|agent| agent.mcp_detection().cloned())
        .or(mcp);
    report(&args, dialect, form, mcp.as_ref(), &steps);
    if dialect.is_some() && steps.iter().all(|step| step.verdict == Verdict::Accepted) {
        Ok(())
    } else {
        anyhow::bail!("the agent did not take every message")
    }
}

/// Sends one message through the bridge; what the agent did with it, and its answer.
async fn run<T>(
    message_type: &'static str,
    warnings: &WarningBuffer,
    call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> (Step, Option<T>) {
    let outcome = call.await;
    let mut step = Step {
        message_type,
        verdict: match &outcome {
            Ok(_) => Verdict::Accepted,
            Err(status) if is_not_implemented(status) => Verdict::NotImplemented,
            Err(_) => Verdict::Refused,
        },
        error: outcome.as_ref().err().map(|status| status.message().to_owned()),
        problems: Vec::new(),
        notes: Vec::new(),
    };
    // What the gateway learnt asking the agent whether it is an MCP server is the report's `mcp` line.
    for warning in warnings
        .take()
        .into_iter()
        .filter(|w| w.kind != kinds::MCP_SERVER)
    {
        // A notification the agent did not take is still "delivered" to a league (never retried):
        // not here. Every kind of refusal counts, with the agent's own words.
        if let Some(verdict) = Verdict::of_warning(&warning.kind)
            && step.verdict == Verdict::Accepted
        {
            step.verdict = verdict;
            step.error = Some(warning.detail.clone());
        }
        // The probe invited the agent as PLAYER, an id no league gave it: a reply naming another player
        // id may name the one its own league gave it, which the probe cannot know.
        if warning.kind == kinds::REPLY_PLAYER_ID
            && let Some(named) = named_player_id(&warning.detail)
        {
            step.notes.push(format!(
                "the reply names player {named}, not {PLAYER} as the probe invited it: whether {named} is \
                 the id its league assigned it the probe cannot tell (in a league, a player names the id \
                 it was assigned)"
            ));
            continue;
        }
        step.problems
            .push((warning.kind.clone(), warning.detail, rule(&warning.kind)));
    }
    (step, outcome.ok().map(tonic::Response::into_inner))
}

/// The player id a `reply_player_id_not_assigned` warning says the reply named (`reply names player
/// "P07", assigned id is P01`), when it is one a league could have assigned; `None` for any other name
/// (`"sloppy"`: no league's id, so wrong whatever league the agent plays in).
fn named_player_id(detail: &str) -> Option<PlayerId> {
    let named = detail
        .strip_prefix("reply names player ")?
        .split(", assigned id is")
        .next()?;
    serde_json::from_str::<String>(named)
        .ok()
        .and_then(|named| PlayerId::parse(&named).ok())
}

impl Step {
    fn refuse(&mut self, detail: String, rule: &'static str) {
        self.verdict = Verdict::Refused;
        self.error = Some(detail.clone());
        self.problems.push(("invalid_answer".to_owned(), detail, rule));
    }
}

const RULE_PARITY: &str = "CHOOSE_PARITY_RESPONSE.parity_choice is exactly \"even\" or \"odd\" (E004)";

/// The rule behind each kind of compliance warning the gateway records.
fn rule(kind: &str) -> &'static str {
    match kind {
        kinds::TIMESTAMP_FORMAT | kinds::TIMESTAMP_NOT_UTC => {
            "timestamp is ISO-8601 in UTC: YYYY-MM-DDTHH:MM:SS[.fff] and Z or +00:00 (E021)"
        }
        kinds::MISSING_ENVELOPE_FIELD => {
            "every message carries protocol, message_type, sender, timestamp, conversation_id (E003)"
        }
        kinds::WRONG_PROTOCOL_FIELD => "protocol is exactly \"league.v2\" (E018)",
        kinds::SENDER_NOT_ID | kinds::REPLY_PLAYER_ID => {
            "a player is player:<the id the league assigned> and names that id as player_id"
        }
        kinds::PLACEHOLDER_TOKEN => {
            "after registration every message carries the agent's own auth_token (E012)"
        }
        kinds::FIELD_ALIAS => {
            "GAME_JOIN_ACK says accept: true|false and CHOOSE_PARITY_RESPONSE says parity_choice (E003)"
        }
        kinds::BARE_RESULT | kinds::RESULT_WITH_ERROR_NULL => {
            "a JSON-RPC 2.0 response has jsonrpc \"2.0\", the request's id, and exactly one of result and error"
        }
        kinds::UNIMPLEMENTED_NOTIFICATION
        | kinds::REFUSED_NOTIFICATION_ANSWER
        | kinds::REFUSED_NOTIFICATION => {
            "a player takes every message the league sends it and answers with a result"
        }
        kinds::REFUSED_SENDER => {
            "the league's messages come from league_manager (or league_manager:<id>) and referee:<id>; a player takes either form"
        }
        kinds::REFUSED_AUTH => {
            "every message the league sends carries an outbound auth_token of its own, not the agent's token: a player may check that one is there, not that it is its own"
        }
        kinds::REFUSED_PARAMS => {
            "a player takes every field the specification defines and ignores the fields it does not know"
        }
        kinds::METHOD_DIALECT => "an agent answers calls in the method names it registered with",
        kinds::CONVERSATION_MISMATCH => "a reply echoes the conversation_id of the call it answers",
        kinds::UNTRUSTED_CERTIFICATE => {
            "an https agent presents a certificate valid now, for its host name, from a CA the league \
             trusts (the system's roots, or LEAGUE_EXTRA_ROOTS)"
        }
        _ => "league.v2 (docs/protocol.md)",
    }
}

fn context() -> MatchContext {
    MatchContext {
        league_id: LEAGUE.to_owned(),
        round_id: 1,
        match_id: MATCH.to_owned(),
        game_type: GameType::EvenOdd.as_str().to_owned(),
        conversation_id: "conv-probe-r1m1".to_owned(),
        referee_id: "REF01".to_owned(),
    }
}

fn deadline(within: Duration) -> Option<prost_types::Timestamp> {
    Some(prost_types::Timestamp::from(SystemTime::now() + within))
}

fn invitation(limit: Duration) -> InviteToMatchRequest {
    InviteToMatchRequest {
        player_id: PLAYER.to_owned(),
        context: Some(context()),
        role_in_match: Role::PlayerA as i32,
        opponent_id: OPPONENT.to_owned(),
        deadline: deadline(limit),
    }
}

fn move_call(limit: Duration) -> RequestMoveRequest {
    RequestMoveRequest {
        player_id: PLAYER.to_owned(),
        context: Some(context()),
        opponent_id: OPPONENT.to_owned(),
        step: 1,
        attempt: 1,
        deadline: deadline(limit),
        your_standings: Some(PlayerRecord::default()),
        step_context: None,
    }
}

fn game_over() -> NotifyGameOverRequest {
    let metadata =
        json!({"drawn_number": 8, "number_parity": "even", "choices": {PLAYER: "even", OPPONENT: "odd"}});
    NotifyGameOverRequest {
        player_id: PLAYER.to_owned(),
        context: Some(context()),
        result: Some(MatchResult {
            match_id: MATCH.to_owned(),
            status: ResultStatus::Win as i32,
            winner_player_id: PLAYER.to_owned(),
            scores: vec![
                PlayerScore {
                    player_id: PLAYER.to_owned(),
                    points: 3,
                },
                PlayerScore {
                    player_id: OPPONENT.to_owned(),
                    points: 0,
                },
            ],
            reason: "P01 chose even, number was 8 (even)".to_owned(),
            at_fault_player_ids: Vec::new(),
            game_metadata: metadata.as_object().map(league_v2::convert::to_struct),
        }),
    }
}

fn game_error() -> NotifyGameErrorRequest {
    NotifyGameErrorRequest {
        player_id: PLAYER.to_owned(),
        context: Some(context()),
        error_code: "E001".to_owned(),
        error_description: "no answer in time (a probe: nothing is at stake)".to_owned(),
        affected_player: PLAYER.to_owned(),
        action_required: "answer CHOOSE_PARITY_CALL".to_owned(),
        retry_count: 1,
        max_retries: 3,
        consequence: "a technical loss after the last attempt".to_owned(),
    }
}

fn row(rank: u32, player_id: &str, wins: u32, losses: u32) -> StandingRow {
    StandingRow {
        rank,
        player_id: player_id.to_owned(),
        display_name: player_id.to_owned(),
        played: wins + losses,
        wins,
        losses,
        points: 3 * wins,
        ..StandingRow::default()
    }
}

/// The league's notifications, in the order a league sends them.
fn events() -> Vec<(&'static str, Event)> {
    let table = vec![row(1, PLAYER, 1, 0), row(2, OPPONENT, 0, 1)];
    let scheduled = ScheduledMatch {
        league_id: LEAGUE.to_owned(),
        round_id: 1,
        match_id: MATCH.to_owned(),
        game_type: GameType::EvenOdd.as_str().to_owned(),
        player_a_id: PLAYER.to_owned(),
        player_b_id: OPPONENT.to_owned(),
        status: MatchStatus::Ready as i32,
        ..ScheduledMatch::default()
    };
    vec![
        (
            MessageType::RoundAnnouncement.as_str(),
            Event::RoundAnnouncement(RoundAnnouncement {
                round_id: 1,
                matches: vec![scheduled],
            }),
        ),
        (
            MessageType::LeagueStandingsUpdate.as_str(),
            Event::StandingsUpdate(StandingsUpdate {
                round_id: 1,
                standings: table.clone(),
            }),
        ),
        (
            MessageType::RoundCompleted.as_str(),
            Event::RoundCompleted(RoundCompleted {
                round_id: 1,
                matches_completed: 1,
                next_round_id: 0,
                summary: Some(RoundSummary {
                    total_matches: 1,
                    wins: 1,
                    draws: 0,
                    technical_losses: 0,
                }),
            }),
        ),
        (
            MessageType::LeagueCompleted.as_str(),
            Event::LeagueCompleted(LeagueCompleted {
                total_rounds: 1,
                total_matches: 1,
                champion: table.first().cloned(),
                final_standings: table,
            }),
        ),
    ]
}

fn report(
    args: &ProbeArgs,
    dialect: Option<Dialect>,
    form: Option<SenderForm>,
    mcp: Option<&McpDetection>,
    steps: &[Step],
) {
    if args.json {
        let steps: Vec<Value> = steps
            .iter()
            .map(|step| {
                json!({
                    "message_type": step.message_type,
                    "accepted": step.verdict == Verdict::Accepted,
                    "verdict": step.verdict.as_str(),
                    "error": step.error,
                    "problems": step.problems.iter().map(|(kind, detail, rule)| {
                        json!({"kind": kind, "detail": detail, "rule": rule})
                    }).collect::<Vec<_>>(),
                    "notes": step.notes,
                })
            })
            .collect();
        let report = json!({
            "agent": args.url,
            "dialect": dialect.map(Dialect::as_str),
            "sender_form": form.map(SenderForm::as_str),
            "mcp": mcp.map(|mcp| json!({"is_mcp_server": mcp.is_mcp_server, "detail": mcp.detail})),
            "messages": steps,
        });
        println!("{report}");
        return;
    }
    println!("agent    {}", args.url);
    match dialect {
        Some(dialect) => println!("dialect  {}", dialect.as_str()),
        None => println!("dialect  none: the agent took no GAME_INVITATION in any dialect"),
    }
    if let Some(form) = form {
        println!("sender   {} (the manager as {})", form.as_str(), form.manager());
    }
    if let Some(mcp) = mcp {
        println!("mcp      {}", mcp.detail);
    }
    for step in steps {
        let verdict = match step.verdict {
            Verdict::Accepted => "accepted",
            Verdict::NotImplemented => "NOT IMPLEMENTED",
            Verdict::Refused => "REFUSED",
        };
        println!("{:<24} {verdict}", step.message_type);
        if let Some(error) = step.error.as_ref().filter(|_| step.verdict != Verdict::Accepted) {
            println!("    {error}");
        }
        for (kind, detail, rule) in &step.problems {
            println!("    {kind}: {detail}\n      rule: {rule}");
        }
        for note in &step.notes {
            println!("    cannot tell: {note}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_naming_another_player_id_is_one_the_probe_cannot_judge() {
        let named = |claimed: &str| {
            named_player_id(&format!(
                "reply names player {claimed:?}, assigned id is {PLAYER}"
            ))
            .map(|id| id.to_string())
        };
        // An id a league gives: maybe the agent's own, in its league.
        assert_eq!(named("P07").as_deref(), Some("P07"));
        // No league's id: wrong wherever the agent plays.
        assert_eq!(named("sloppy"), None);
        assert_eq!(named("p07"), None);
        assert_eq!(named_player_id("something else"), None);
    }
}
