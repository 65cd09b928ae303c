//! What `league-bench` takes: the league sizes, the referees, external agents or bots, wrk, and
//! leagues played at once.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// League sizes to run, e.g. 20,50,200.
    #[arg(long, value_delimiter = ',', default_values_t = [20, 50, 200])]
    pub players: Vec<u32>,
    /// Referee processes.
    #[arg(long, default_value_t = 2)]
    pub referees: u32,
    /// Matches each referee runs at once (the referee's own default).
    #[arg(long, default_value_t = league_referee::app::DEFAULT_CAPACITY)]
    pub referee_capacity: u32,
    /// Every player is a fake external agent (one HTTP server in this process, one path per player)
    /// that registers through the gateway and answers at once, instead of a bot.
    #[arg(long)]
    pub external: bool,
    /// With --external: each league size is played N times by bots and N times by external agents,
    /// alternated (bots, then external, N times), and each pair's walls and their ratio are printed with
    /// the median ratio. The machine's speed drifts from one minute to the next; pairs run side by side
    /// compare the two on the same machine.
    #[arg(long, value_name = "N", requires = "external", value_parser = clap::value_parser!(u32).range(1..))]
    pub against_bots: Option<u32>,
    /// After each league, measure its gateway with wrk for this long per call (e.g. 10s): ping,
    /// get_standings and league_query, with the operator's token (and as an agent with --external).
    #[arg(long)]
    pub wrk: Option<String>,
    /// wrk's connections.
    #[arg(long, default_value_t = 32)]
    pub wrk_connections: u32,
    /// wrk's threads.
    #[arg(long, default_value_t = 2)]
    pub wrk_threads: u32,
    /// Play K leagues of each size at once on one system (one manager, these referees, a player host of
    /// its own bots for each league), started together: the whole's matches a second from the first
    /// start to the last completion, and each league's wall and round gaps.
    #[arg(
        long,
        value_name = "K",
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..),
        conflicts_with_all = ["external", "wrk"]
    )]
    pub concurrent_leagues: u32,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::BenchArgs;

    #[derive(Debug, Parser)]
    struct Bench {
        #[command(flatten)]
        args: BenchArgs,
    }

    fn parse(args: &[&str]) -> Result<BenchArgs, clap::Error> {
        Bench::try_parse_from(std::iter::once("bench").chain(args.iter().copied())).map(|bench| bench.args)
    }

    #[test]
    fn pairs_are_external_leagues_against_bots_and_at_least_one() {
        let args = parse(&["--external", "--against-bots", "3"]).expect("valid");
        assert_eq!(args.against_bots, Some(3));
        assert!(parse(&["--against-bots", "3"]).is_err(), "pairs need --external");
        assert!(
            parse(&["--external", "--against-bots", "0"]).is_err(),
            "no pairs is no comparison"
        );
    }

    #[test]
    fn concurrent_leagues_are_bots_and_at_least_one() {
        assert_eq!(parse(&[]).expect("valid").concurrent_leagues, 1);
        let args = parse(&["--concurrent-leagues", "10", "--players", "50"]).expect("valid");
        assert_eq!((args.concurrent_leagues, args.players), (10, vec![50]));
        assert!(parse(&["--concurrent-leagues", "0"]).is_err());
        assert!(parse(&["--concurrent-leagues", "2", "--external"]).is_err());
        assert!(parse(&["--concurrent-leagues", "2", "--wrk", "1s"]).is_err());
    }
}
