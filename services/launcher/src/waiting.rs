//! What a league that waits for external agents waits for, said by `league run` while it registers:
//! "N of M registered — waiting for K external agents at <URL>", once each time the count moves (the
//! live page says the same: gateway/live).

use league_proto::v2::{GetLeagueStatusResponse, LeagueStatus};

/// The league's expected players, the external ones among them, and where they register.
#[derive(Debug)]
pub struct Waiting {
    pub expected: u32,
    pub external: u32,
    pub url: String,
    said: Option<u32>,
}

impl Waiting {
    pub fn new(expected: u32, external: u32, url: String) -> Self {
        Waiting {
            expected,
            external,
            url,
            said: None,
        }
    }

    /// The line to say for `status`, if the league waits for external agents and its count moved.
    pub fn line(&mut self, status: &GetLeagueStatusResponse) -> Option<String> {
        if self.external == 0 || status.status != LeagueStatus::Registering as i32 {
            return None;
        }
        let registered = status.registered_players;
        if self.said == Some(registered) || registered >= self.expected {
            return None;
        }
        self.said = Some(registered);
        Some(line(registered, self.expected, self.external, &self.url))
    }
}

/// "N of M registered — waiting for K external agents at <URL>": K counts the external agents still
/// missing (the bots may not all be in yet either, but they come by themselves).
pub fn line(registered: u32, expected: u32, external: u32, url: &str) -> String {
    let missing = expected.saturating_sub(registered).min(external);
    let agents = if missing == 1 { "agent" } else { "agents" };
    format!("{registered} of {expected} registered — waiting for {missing} external {agents} at {url}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registering(registered: u32) -> GetLeagueStatusResponse {
        GetLeagueStatusResponse {
            status: LeagueStatus::Registering as i32,
            registered_players: registered,
            ..Default::default()
        }
    }

    #[test]
    fn the_line_is_said_once_each_time_the_count_moves_and_never_once_full() {
        let url = "http://127.0.0.1:8000/mcp";
        let mut waiting = Waiting::new(5, 2, url.to_owned());
        assert_eq!(
            waiting.line(&registering(0)).as_deref(),
            Some("0 of 5 registered — waiting for 2 external agents at http://127.0.0.1:8000/mcp")
        );
        assert_eq!(waiting.line(&registering(0)), None);
        assert_eq!(
            waiting.line(&registering(4)).as_deref(),
            Some("4 of 5 registered — waiting for 1 external agent at http://127.0.0.1:8000/mcp")
        );
        assert_eq!(waiting.line(&registering(5)), None);
        let running = GetLeagueStatusResponse {
            status: LeagueStatus::Running as i32,
            ..registering(3)
        };
        assert_eq!(waiting.line(&running), None);
        assert_eq!(Waiting::new(4, 0, url.to_owned()).line(&registering(1)), None);
    }
}
