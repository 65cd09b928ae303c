//! A bot's display name says its behaviour (`bot-adaptive`), so that anyone reading a table — the
//! launcher's results folder, `league players`, the live page — can group players by strategy without
//! the player host. This is that naming's one home: the name a bot is given, and the strategy a
//! registered player's name and labels say.

use league_proto::v2::AgentMeta;

use crate::Behaviour;

/// What a player that registered on its own (not one of our bots) plays, as its strategy group.
pub const EXTERNAL: &str = "external";

/// The display name of a bot playing `behaviour`: `bot-<behaviour>`.
pub fn bot_name(behaviour: Behaviour) -> String {
    format!("bot-{behaviour}")
}

/// A player's strategy group by its display name: a bot's behaviour (`bot-<behaviour>`, or
/// `bot-<n>-<behaviour>` from older runs) without its parameter (`late:200` is `late`), else
/// [`EXTERNAL`].
pub fn strategy_of(display_name: &str) -> String {
    let Some(rest) = display_name.strip_prefix("bot-") else {
        return EXTERNAL.to_owned();
    };
    let behaviour = match rest.split_once('-') {
        Some((number, behaviour)) if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) => {
            behaviour
        }
        _ => rest,
    };
    match behaviour.parse::<Behaviour>() {
        // Fault behaviours carry a parameter (late:200, flaky:3): the group is the behaviour.
        Ok(_) => behaviour.split(':').next().unwrap_or(behaviour).to_owned(),
        Err(_) => EXTERNAL.to_owned(),
    }
}

/// A registered player's strategy group: [`EXTERNAL`] for an agent that registered through the gateway
/// (its `league.external` label; whatever it calls itself), else its name's ([`strategy_of`]).
pub fn strategy_of_player(meta: &AgentMeta) -> String {
    if meta.labels.get(league_proto::EXTERNAL_LABEL).map(String::as_str) == Some("true") {
        return EXTERNAL.to_owned();
    }
    strategy_of(&meta.display_name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StrategyKind;

    #[test]
    fn bots_are_grouped_by_behaviour_and_everyone_else_is_external() {
        assert_eq!(strategy_of(&bot_name(StrategyKind::Random.into())), "random");
        assert_eq!(strategy_of("bot-late:200"), "late");
        assert_eq!(strategy_of("bot-clever"), "external");
        assert_eq!(strategy_of("bot-01-random"), "random");
        assert_eq!(strategy_of("bot-12-always_even"), "always_even");
        assert_eq!(strategy_of("bot-03-late:200"), "late");
        assert_eq!(strategy_of("alpha"), "external");
        assert_eq!(strategy_of("bot-x-random"), "external");
    }

    #[test]
    fn an_agent_registered_through_the_gateway_is_external_whatever_its_name() {
        let mut meta = AgentMeta {
            display_name: "bot-random".into(),
            ..AgentMeta::default()
        };
        assert_eq!(strategy_of_player(&meta), "random");
        meta.labels
            .insert(league_proto::EXTERNAL_LABEL.into(), "true".into());
        assert_eq!(strategy_of_player(&meta), "external");
    }
}
