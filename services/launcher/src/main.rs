//! `league`: one binary for every service (`league manager`, `league referee`, `league player-host`) and the
//! command that runs a whole league on this machine (`league run`). Compose, Kubernetes and the launcher
//! all run these same subcommands with the same `LEAGUE_*` configuration.

use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

use league_launcher::run::Interrupted;
use league_launcher::{Command, children, execute};

/// mimalloc, built without transparent huge pages (ADR 0033): glibc's malloc and free were a fifth of the
/// gateway's instructions, and with huge pages every service's peak memory doubled.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The longest error message printed: a message built from a huge input must not flood the terminal.
const MAX_ERROR_CHARS: usize = 4_000;

/// How a command ends whose reader went away (`league schedule | head -1`): quietly, with the status of
/// a program stopped by SIGPIPE (128 + 13), as `cat` and the shell's own commands end.
const CLOSED_PIPE_EXIT: u8 = 141;

/// Set when printing failed because the reader closed the pipe.
static PIPE_CLOSED: AtomicBool = AtomicBool::new(false);

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
    quiet_on_closed_pipe();
    // `println!` panics when the reader closed the pipe: the panic unwinds (what the command holds is
    // dropped: its services stop, its files go) and the command ends quietly.
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| runtime.block_on(execute(cli.command))));
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(_) if PIPE_CLOSED.load(Ordering::SeqCst) => return ExitCode::from(CLOSED_PIPE_EXIT),
        Err(panic) => std::panic::resume_unwind(panic),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(interrupted) = error.downcast_ref::<Interrupted>() {
                eprintln!("{interrupted}");
                return ExitCode::from(interrupted.exit_code());
            }
            eprintln!("league: {}", capped(&format!("{error:#}")));
            // Its supervisor (`league serve`'s) does not start a revoked referee again.
            if error.downcast_ref::<league_runtime::Revoked>().is_some() {
                return ExitCode::from(league_runtime::revoked::REVOKED_EXIT);
            }
            ExitCode::FAILURE
        }
    }
}

/// Keeps the panic message of a print to a closed pipe off the terminal (and notes it); every other
/// panic is reported as before.
fn quiet_on_closed_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        if is_closed_pipe(message) {
            PIPE_CLOSED.store(true, Ordering::SeqCst);
            return;
        }
        report(info);
    }));
}

/// Whether a panic's message is the standard library's for a print to a closed pipe.
fn is_closed_pipe(message: Option<&str>) -> bool {
    message.is_some_and(|message| {
        message.starts_with("failed printing to std") && message.contains("Broken pipe")
    })
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
    fn only_a_print_to_a_closed_pipe_is_quiet() {
        assert!(is_closed_pipe(Some(
            "failed printing to stdout: Broken pipe (os error 32)"
        )));
        assert!(!is_closed_pipe(Some("failed printing to stdout: No space left")));
        assert!(!is_closed_pipe(Some("index out of bounds")));
        assert!(!is_closed_pipe(None));
    }

    #[test]
    fn long_error_messages_are_cut() {
        assert_eq!(capped("short"), "short");
        let long = "x".repeat(MAX_ERROR_CHARS + 10);
        let shown = capped(&long);
        assert!(shown.starts_with(&"x".repeat(MAX_ERROR_CHARS)));
        assert!(shown.ends_with("… (10 more bytes not shown)"), "{shown}");
    }
}
