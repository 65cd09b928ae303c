//! How many referees `league run` and `league serve` start, and how many matches each runs at once, when
//! not told: sized to the machine (docs/operations.md, "Referee capacity";
//! docs/adr/0060-many-leagues-at-once.md).

use std::num::NonZeroUsize;

/// The referees of a local system: processes, and matches each runs at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Referees {
    pub referees: u32,
    pub capacity: u32,
}

impl Referees {
    /// One referee per core this process may use (`std::thread::available_parallelism`; 1 if it cannot
    /// be told), each running the referee's default capacity (`league_referee::app::DEFAULT_CAPACITY`).
    ///
    /// Why: a referee runs its matches on one worker thread (ADR 0030), so one per core lets the
    /// referees use every core when the leagues need them; and a match in flight is a task waiting on
    /// its players, cheap, so the capacity is not bounded by cores. Two referees of 8 held ten concurrent
    /// leagues to 16 matches at once (issue 42).
    pub fn of_this_machine() -> Self {
        Self::for_cores(std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
    }

    /// [`Self::of_this_machine`] on `cores` cores, never more referees than a manager takes by default
    /// (`LEAGUE_MAX_REFEREES`): those beyond it would be refused.
    fn for_cores(cores: usize) -> Self {
        let most = league_manager::config::RegistrationConfig::default().max_referees;
        Self {
            referees: u32::try_from(cores).unwrap_or(u32::MAX).clamp(1, most),
            capacity: league_referee::app::DEFAULT_CAPACITY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_referee_per_core_each_at_the_referees_default_capacity() {
        let default_capacity = league_referee::app::DEFAULT_CAPACITY;
        assert_eq!(
            Referees::for_cores(2),
            Referees {
                referees: 2,
                capacity: default_capacity
            }
        );
        assert_eq!(Referees::for_cores(1).referees, 1);
        assert_eq!(Referees::for_cores(0).referees, 1, "at least one referee");
        let most = league_manager::config::RegistrationConfig::default().max_referees;
        assert_eq!(
            Referees::for_cores(4096).referees,
            most,
            "no more than the manager admits"
        );
        let here = Referees::of_this_machine();
        assert!(
            here.referees >= 1 && here.capacity == default_capacity,
            "{here:?}"
        );
    }

    #[test]
    fn run_and_serve_default_to_it_and_what_they_are_told_wins() {
        let machine = Referees::of_this_machine();
        let run = crate::run::RunArgs::defaults().expect("the defaults parse");
        assert_eq!(
            (run.referees, run.referee_capacity),
            (machine.referees, machine.capacity)
        );
        #[derive(Debug, clap::Parser)]
        struct Serve {
            #[command(flatten)]
            serve: crate::serve::ServeArgs,
        }
        let parse = |args: &[&str]| {
            <Serve as clap::Parser>::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
                .map(|parsed| parsed.serve)
        };
        let serve = parse(&[]).expect("the defaults parse");
        assert_eq!(
            (serve.referees, serve.referee_capacity),
            (machine.referees, machine.capacity)
        );
        let told = parse(&["--referees", "3", "--referee-capacity", "5"]).expect("valid");
        assert_eq!((told.referees, told.referee_capacity), (3, 5));
    }
}
