//! One bot player: its behaviour, its memory, and the reply it gives to each request.
//!
//! A bot decides synchronously and says *when* to answer in a [`Reply`]; the host waits outside its lock.
//! That keeps every timing fault (silent, late) from holding up the other bots.

use std::time::{Duration, SystemTime};

use league_proto::v2::{InviteToMatchResponse, RequestMoveRequest, RequestMoveResponse};
use league_proto::{ErrorCode, error_code};
use rand::Rng;

use crate::behaviour::Behaviour;
use crate::fault::Fault;
use crate::llm_moves::LlmMoves;
use crate::memory::Memory;
use crate::strategy::{StrategyKind, parity_move};

/// What a bot answers, and when.
#[derive(Debug)]
pub enum Reply<T> {
    Now(T),
    After(Duration, T),
    /// Never: the caller's deadline decides what happens.
    Never,
    Fail(tonic::Status),
}

impl<T> Reply<T> {
    /// Waits as the reply says, then answers.
    pub async fn deliver(self) -> Result<tonic::Response<T>, tonic::Status> {
        match self {
            Reply::Now(message) => Ok(tonic::Response::new(message)),
            Reply::After(delay, message) => {
                tokio::time::sleep(delay).await;
                Ok(tonic::Response::new(message))
            }
            Reply::Never => std::future::pending().await,
            Reply::Fail(status) => Err(status),
        }
    }
}

/// One hosted player.
#[derive(Debug)]
pub struct Bot {
    pub display_name: String,
    pub behaviour: Behaviour,
    pub memory: Memory,
    /// An `llm` bot's moves by who decided them.
    pub llm_moves: LlmMoves,
    /// Move requests refused so far, for `flaky:<n>`.
    failed_moves: u32,
}

impl Bot {
    pub fn new(display_name: impl Into<String>, behaviour: Behaviour) -> Bot {
        Bot {
            display_name: display_name.into(),
            behaviour,
            memory: Memory::default(),
            llm_moves: LlmMoves::default(),
            failed_moves: 0,
        }
    }

    /// GAME_JOIN_ACK: accept at once, unless this bot declines or stays silent.
    pub fn invitation(&self) -> Reply<InviteToMatchResponse> {
        let arrival_timestamp = Some(SystemTime::now().into());
        match self.behaviour {
            Behaviour::Fault(Fault::Silent) => Reply::Never,
            Behaviour::Fault(Fault::Declines) => Reply::Now(InviteToMatchResponse {
                accept: false,
                arrival_timestamp,
                reason: "this bot declines every invitation".to_owned(),
            }),
            Behaviour::Strategy(_) | Behaviour::Fault(_) | Behaviour::Llm => {
                Reply::Now(InviteToMatchResponse {
                    accept: true,
                    arrival_timestamp,
                    reason: String::new(),
                })
            }
        }
    }

    /// The bot's move for `request`.
    pub fn move_for(
        &mut self,
        request: &RequestMoveRequest,
        rng: &mut impl Rng,
    ) -> Reply<RequestMoveResponse> {
        // Borrows only the memory, so a flaky bot can still count its failures below.
        let history = self.memory.history();
        let play = |kind: StrategyKind, rng: &mut _| RequestMoveResponse {
            move_payload: Some(kind.choose_move(request, history, rng)),
        };
        match self.behaviour {
            Behaviour::Strategy(kind) => Reply::Now(play(kind, rng)),
            // The model is asked by the host, outside the bots' lock; here is its fallback.
            Behaviour::Llm => Reply::Now(play(StrategyKind::Adaptive, rng)),
            Behaviour::Fault(Fault::Silent) => Reply::Never,
            Behaviour::Fault(Fault::Late(delay)) => Reply::After(delay, play(StrategyKind::Random, rng)),
            Behaviour::Fault(Fault::Invalid) => Reply::Now(RequestMoveResponse {
                move_payload: Some(parity_move("maybe")),
            }),
            Behaviour::Fault(Fault::Flaky(failures)) if self.failed_moves < failures => {
                self.failed_moves += 1;
                Reply::Fail(error_code::status(
                    ErrorCode::ConnectionError,
                    format!(
                        "flaky bot: move request refused ({} of {failures})",
                        self.failed_moves
                    ),
                ))
            }
            Behaviour::Fault(Fault::Declines | Fault::Flaky(_)) => {
                Reply::Now(play(StrategyKind::Random, rng))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::MatchContext;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;
    use crate::payload::read_string;

    fn even_odd_request() -> RequestMoveRequest {
        RequestMoveRequest {
            context: Some(MatchContext {
                game_type: "even_odd".into(),
                ..MatchContext::default()
            }),
            ..RequestMoveRequest::default()
        }
    }

    fn bot(behaviour: &str) -> Bot {
        let behaviour = behaviour.parse().unwrap_or_else(|error| panic!("{error}"));
        Bot::new("bot", behaviour)
    }

    fn choice(reply: Reply<RequestMoveResponse>) -> Option<String> {
        match reply {
            Reply::Now(response) | Reply::After(_, response) => response
                .move_payload
                .and_then(|p| read_string(&p, "parity_choice").map(str::to_owned)),
            Reply::Never | Reply::Fail(_) => None,
        }
    }

    #[test]
    fn invitations_are_accepted_unless_the_bot_declines_or_is_silent() {
        for behaviour in ["random", "late:10", "invalid", "flaky:1"] {
            let Reply::Now(ack) = bot(behaviour).invitation() else {
                panic!("{behaviour}: no answer")
            };
            assert!(
                ack.accept && ack.arrival_timestamp.is_some(),
                "{behaviour}: {ack:?}"
            );
        }
        let Reply::Now(ack) = bot("declines").invitation() else {
            panic!("declines: no answer")
        };
        assert!(!ack.accept && !ack.reason.is_empty());
        assert!(matches!(bot("silent").invitation(), Reply::Never));
    }

    #[test]
    fn fault_bots_answer_moves_as_named() {
        let mut rng = StdRng::seed_from_u64(5);
        let request = even_odd_request();
        assert!(matches!(bot("silent").move_for(&request, &mut rng), Reply::Never));
        assert_eq!(
            choice(bot("invalid").move_for(&request, &mut rng)).as_deref(),
            Some("maybe")
        );
        let late = bot("late:1500").move_for(&request, &mut rng);
        assert!(matches!(late, Reply::After(delay, _) if delay == Duration::from_millis(1500)));
        assert!(matches!(choice(late).as_deref(), Some("even" | "odd")));
    }

    #[test]
    fn a_flaky_bot_fails_its_first_moves_then_plays() {
        let mut rng = StdRng::seed_from_u64(5);
        let mut flaky = bot("flaky:2");
        for _ in 0..2 {
            let Reply::Fail(status) = flaky.move_for(&even_odd_request(), &mut rng) else {
                panic!("should fail")
            };
            assert_eq!(status.code(), tonic::Code::Unavailable);
            assert_eq!(error_code::code_of(&status), Some(ErrorCode::ConnectionError));
        }
        assert!(matches!(
            choice(flaky.move_for(&even_odd_request(), &mut rng)).as_deref(),
            Some("even" | "odd")
        ));
    }
}
