//! What `league run` was told, as its results folder's provenance records it: every setting that
//! shapes the league (players, strategies, game, cycles, timeouts, think time, seed, referees).

use serde_json::{Value, json};

use crate::run::RunArgs;

/// `args` as JSON, each setting under its option's name.
pub fn of(args: &RunArgs) -> Value {
    json!({
        "league": args.league.as_ref().map(ToString::to_string),
        "game": args.game.to_string(),
        "players": args.players,
        "external_players": args.external_players,
        "strategies": args.strategies,
        "cycles": args.cycles,
        "seed": args.seed,
        "referees": args.referees,
        "referee_capacity": args.referee_capacity,
        "gateways": args.gateways,
        "join_timeout": args.timing.join_timeout,
        "move_timeout": args.timing.move_timeout,
        "retry_delay": args.timing.retry_delay,
        "max_attempts": args.timing.max_attempts,
        "think_time": args.timing.think_time,
        "deadline": args.deadline,
        "agent_rate_limit": args.agent_rate_limit,
    })
}
