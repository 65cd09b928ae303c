//! How far a league has got, for the person who started it: a progress bar with the rate and an ETA on
//! a terminal, a few plain lines (each tenth of the matches, or every 10 s) when the output is piped.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use league_proto::v2::GetLeagueStatusResponse;

/// The longest a piped run stays silent while matches finish.
const PLAIN_EVERY: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub enum Progress {
    /// `--quiet`: nothing.
    Silent,
    Bar(ProgressBar),
    Plain(Plain),
}

/// When the last plain line was written, and what it said.
#[derive(Debug)]
pub struct Plain {
    shown_tenth: Option<u64>,
    shown_at: Instant,
    shown_finished: u32,
}

impl Progress {
    /// A bar when stderr is a terminal, plain lines otherwise, nothing when `quiet`.
    pub fn new(quiet: bool) -> Self {
        if quiet {
            Self::Silent
        } else if std::io::stderr().is_terminal() {
            let style =
                ProgressStyle::with_template("{prefix} [{bar:32}] {pos}/{len} matches · {rate} · ETA {eta}")
                    .map(|style| {
                        style.with_key("rate", |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                            let _ = write!(out, "{:.0} matches/s", state.per_sec());
                        })
                    })
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
            Self::Bar(ProgressBar::new(0).with_style(style))
        } else {
            Self::Plain(Plain {
                shown_tenth: None,
                shown_at: Instant::now(),
                shown_finished: 0,
            })
        }
    }

    pub fn update(&mut self, status: &GetLeagueStatusResponse) {
        if status.total_matches == 0 {
            return;
        }
        match self {
            Self::Silent => {}
            Self::Bar(bar) => {
                bar.set_length(u64::from(status.total_matches));
                bar.set_position(u64::from(status.finished_matches));
                bar.set_prefix(format!(
                    "round {}/{}",
                    status.current_round_id, status.total_rounds
                ));
            }
            Self::Plain(plain) => {
                if let Some(line) = plain.line(status, Instant::now()) {
                    eprintln!("{line}");
                }
            }
        }
    }

    /// Clears the bar, so the table printed next starts on a clean line.
    pub fn finish(&self) {
        if let Self::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

impl Plain {
    /// The line to write now, if one is due: at each new tenth of the matches, or once [`PLAIN_EVERY`]
    /// has passed with matches finished since the last line.
    fn line(&mut self, status: &GetLeagueStatusResponse, now: Instant) -> Option<String> {
        let tenth = u64::from(status.finished_matches) * 10 / u64::from(status.total_matches.max(1));
        let new_tenth = self.shown_tenth != Some(tenth);
        let overdue = now.duration_since(self.shown_at) >= PLAIN_EVERY
            && status.finished_matches != self.shown_finished;
        if !new_tenth && !overdue {
            return None;
        }
        self.shown_tenth = Some(tenth);
        self.shown_at = now;
        self.shown_finished = status.finished_matches;
        Some(format!(
            "round {}/{} · {}/{} matches",
            status.current_round_id, status.total_rounds, status.finished_matches, status.total_matches
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(finished: u32) -> GetLeagueStatusResponse {
        GetLeagueStatusResponse {
            current_round_id: (1 + finished / 25).min(49),
            total_rounds: 49,
            total_matches: 1225,
            finished_matches: finished,
            ..Default::default()
        }
    }

    #[test]
    fn a_piped_league_of_fifty_players_prints_about_ten_lines() {
        let start = Instant::now();
        let mut plain = Plain {
            shown_tenth: None,
            shown_at: start,
            shown_finished: 0,
        };
        // Every match reported, all within a second: only the tenths produce lines.
        let lines: Vec<String> = (0..=1225)
            .filter_map(|finished| plain.line(&status(finished), start))
            .collect();
        assert_eq!(lines.len(), 11, "{lines:#?}");
        assert_eq!(lines[0], "round 1/49 · 0/1225 matches");
        assert_eq!(lines[10], "round 49/49 · 1225/1225 matches");
    }

    #[test]
    fn a_slow_league_still_says_something_every_ten_seconds() {
        let start = Instant::now();
        let mut plain = Plain {
            shown_tenth: None,
            shown_at: start,
            shown_finished: 0,
        };
        assert!(plain.line(&status(1), start).is_some());
        assert!(plain.line(&status(2), start + Duration::from_secs(5)).is_none());
        assert!(plain.line(&status(3), start + Duration::from_secs(11)).is_some());
        // Nothing finished since: nothing to say, however long it takes.
        assert!(plain.line(&status(3), start + Duration::from_secs(30)).is_none());
    }
}
