//! `league`: one binary for every service (`league manager`, `league referee`, `league player`) and the
//! command that runs a whole league on this machine (`league run`). Compose, Kubernetes and the launcher
//! all run these same subcommands with the same `LEAGUE_*` configuration.

use std::process::ExitCode;

use clap::Parser;

use league_launcher::run::Interrupted;
use league_launcher::{Command, children, execute};

/// mimalloc, built without transparent huge pages (ADR 0033): glibc's malloc and free were a fifth of the
/// gateway's instructions, and with huge pages every service's peak memory doubled.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The longest error message printed: a message built from a huge input must not flood the terminal.
const MAX_ERROR_CHARS: usize = 4_000;

#[derive(Debug, Parser)]
#[command(
    name = "league",
    version,
    about = "Round-robin leagues of autonomous agents (league.v2)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(error) = children::die_with_parent() {
        eprintln!("league: {error:#}");
        return ExitCode::FAILURE;
    }
    let runtime = match league_runtime::threads::runtime() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("league: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(execute(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(interrupted) = error.downcast_ref::<Interrupted>() {
                eprintln!("{interrupted}");
                return ExitCode::from(interrupted.exit_code());
            }
            eprintln!("league: {}", capped(&format!("{error:#}")));
            ExitCode::FAILURE
        }
    }
}

/// `message`, cut to [`MAX_ERROR_CHARS`] with a note of how much was left out.
fn capped(message: &str) -> String {
    match message.char_indices().nth(MAX_ERROR_CHARS) {
        None => message.to_owned(),
        Some((cut, _)) => format!(
            "{}… ({} more bytes not shown)",
            &message[..cut],
            message.len() - cut
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_error_messages_are_cut() {
        assert_eq!(capped("short"), "short");
        let long = "x".repeat(MAX_ERROR_CHARS + 10);
        let shown = capped(&long);
        assert!(shown.starts_with(&"x".repeat(MAX_ERROR_CHARS)));
        assert!(shown.ends_with("… (10 more bytes not shown)"), "{shown}");
    }
}
