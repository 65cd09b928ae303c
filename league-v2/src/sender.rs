//! The form of the `sender` the league writes on messages it sends an agent. Real agents disagree and
//! no one form satisfies all: one family accepts only the bare `league_manager` (its validator wants
//! `player` or `referee` before any colon), another validates `^(player|referee|league_manager):[A-Z0-9]+$`
//! and accepts only `league_manager:LM01`. So the form is part of each agent's dialect: bare until the
//! agent shows it wants the other, then remembered on the agent (the gateway's `ExternalAgent`).
//!
//! How an agent shows it: it refuses over the sender the greeting sent before its registration is
//! answered (the gateway's greeting), or any later call ([`refused_over_sender`]; the caller retries once
//! in the [`SenderForm::other`] form and keeps the one that worked); or the operator names its form
//! (`LEAGUE_SENDER_FORMS`). Outbound calls write the sender with [`SenderForm::apply`].

use serde_json::Value;

use crate::jsonrpc::RpcError;

// The manager's name is a literal once; `concat!` (which takes only literals) builds the typed form.
macro_rules! manager {
    () => {
        "league_manager"
    };
}

/// The league manager as a sender, in the bare form: what the league writes on the messages it builds.
pub const MANAGER: &str = manager!();
/// The league manager in the typed form (`type:ID`, as every sender of that family is written; the
/// manager's id is LM01).
pub(crate) const TYPED_MANAGER: &str = concat!(manager!(), ":LM01");
/// A referee's role, before its id: `referee:<ID>`.
pub const REFEREE: &str = "referee";
/// A player's role, before its id: `player:<ID>`.
pub const PLAYER: &str = "player";

/// A referee as a sender: `referee:<id>`.
pub fn referee(id: &str) -> String {
    format!("{REFEREE}:{id}")
}

/// A player as a sender: `player:<id>`.
pub fn player(id: &str) -> String {
    format!("{PLAYER}:{id}")
}

/// How the league writes its senders for one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SenderForm {
    /// `league_manager` (the course text's examples); referees `referee:<ID>`.
    #[default]
    Bare,
    /// `league_manager:LM01` (every sender `type:ID`); referees `referee:<ID>`.
    Typed,
}

impl SenderForm {
    pub fn as_str(self) -> &'static str {
        match self {
            SenderForm::Bare => "bare",
            SenderForm::Typed => "typed",
        }
    }

    pub fn parse(text: &str) -> Option<SenderForm> {
        [SenderForm::Bare, SenderForm::Typed]
            .into_iter()
            .find(|form| form.as_str() == text)
    }

    pub fn other(self) -> SenderForm {
        match self {
            SenderForm::Bare => SenderForm::Typed,
            SenderForm::Typed => SenderForm::Bare,
        }
    }

    /// The league manager, in this form.
    pub fn manager(self) -> &'static str {
        match self {
            SenderForm::Bare => MANAGER,
            SenderForm::Typed => TYPED_MANAGER,
        }
    }

    /// A `sender` written by whoever built a message (`league_manager`, `league_manager:<id>` or
    /// `referee[:<id>]`) in this form; `None` for any other sender, which is left alone. Written over
    /// another form's sender it gives this form's.
    pub(crate) fn written(self, sender: &str) -> Option<String> {
        match sender.split_once(':') {
            None if sender == MANAGER => Some(self.manager().to_owned()),
            Some((MANAGER, _)) => Some(self.manager().to_owned()),
            // A referee always has an id in both families; only its case is normalised.
            Some((REFEREE, id)) if !id.is_empty() => Some(referee(&id.to_ascii_uppercase())),
            _ => None,
        }
    }

    /// Rewrites a message's `sender` in this form ([`SenderForm::written`]).
    pub fn apply(self, message: &mut Value) {
        let Some(Value::String(sender)) = message.get("sender") else {
            return;
        };
        if let Some(rewritten) = self.written(sender) {
            message["sender"] = rewritten.into();
        }
    }
}

/// Whether an agent's error refuses the call over its `sender` (`-32602 "Sender not registered"`, a
/// validator's "Invalid sender: type must be player or referee", a data field naming the sender): the
/// other form may work. Every other refusal means what it says: an error listing `sender` among missing
/// fields ("Missing required fields: sender, timestamp") is about where the agent looks for the
/// envelope, which the other form does not change.
pub fn refused_over_sender(error: &RpcError) -> bool {
    let missing = |text: &str| {
        let text = text.to_ascii_lowercase();
        text.contains("missing") || text.contains("required field")
    };
    if missing(&error.message)
        || error.data.as_ref().is_some_and(|data| match data {
            Value::String(text) => missing(text),
            Value::Object(fields) => fields
                .iter()
                .any(|(key, value)| missing(key) || value.as_str().is_some_and(missing)),
            _ => false,
        })
    {
        return false;
    }
    let mentions = |text: &str| text.to_ascii_lowercase().contains("sender");
    mentions(&error.message)
        || error.data.as_ref().is_some_and(|data| match data {
            Value::String(text) => mentions(text),
            Value::Object(fields) => fields
                .iter()
                .any(|(key, value)| mentions(key) || value.as_str().is_some_and(mentions)),
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sent(form: SenderForm, sender: &str) -> Value {
        let mut message = json!({"sender": sender});
        form.apply(&mut message);
        message["sender"].clone()
    }

    #[test]
    fn each_form_writes_the_manager_its_way() {
        assert_eq!(sent(SenderForm::Bare, "league_manager"), "league_manager");
        assert_eq!(sent(SenderForm::Typed, "league_manager"), "league_manager:LM01");
        assert_eq!(sent(SenderForm::Bare, "league_manager:LM01"), "league_manager");
        assert_eq!(sent(SenderForm::Typed, "referee:REF01"), "referee:REF01");
        assert_eq!(sent(SenderForm::Bare, "referee:ref02"), "referee:REF02");
        assert_eq!(sent(SenderForm::Typed, "player:P01"), "player:P01");
        assert_eq!(SenderForm::Bare.other(), SenderForm::Typed);
        assert_eq!(SenderForm::parse("typed"), Some(SenderForm::Typed));
    }

    #[test]
    fn a_form_applied_over_another_gives_its_own() {
        for original in [
            "league_manager",
            "league_manager:LM01",
            "referee:ref02",
            "player:P01",
        ] {
            for (first, then) in [
                (SenderForm::Bare, SenderForm::Typed),
                (SenderForm::Typed, SenderForm::Bare),
            ] {
                let mut message = json!({"sender": original});
                first.apply(&mut message);
                then.apply(&mut message);
                assert_eq!(message["sender"], sent(then, original), "{original}");
            }
        }
    }

    #[test]
    fn sender_refusals_are_told_apart() {
        let refusal = |message: &str, data: Option<Value>| RpcError {
            code: -32602,
            message: message.to_owned(),
            data,
        };
        assert!(refused_over_sender(&refusal("Sender not registered", None)));
        assert!(refused_over_sender(&refusal(
            "Invalid sender: type must be player or referee",
            None
        )));
        assert!(refused_over_sender(&refusal(
            "Invalid params",
            Some(json!({"field": "sender"}))
        )));
        assert!(!refused_over_sender(&refusal(
            "Missing auth token",
            Some(json!({"error_code": "E012"}))
        )));
        assert!(!refused_over_sender(&refusal(
            "Missing required field: match_id",
            None
        )));
        // A missing field named `sender` is where the agent looks, not which form it takes.
        assert!(!refused_over_sender(&refusal(
            "Missing required fields: sender, timestamp",
            None
        )));
        assert!(!refused_over_sender(&refusal(
            "Invalid params",
            Some(json!({"missing": "sender"}))
        )));
        assert!(!refused_over_sender(&refusal(
            "Invalid params",
            Some(json!({"field": "sender", "reason": "required field missing"}))
        )));
    }
}
