//! `league verify <results folder>`, the command: checks a results folder on its own, with no database
//! and no manager (what it checks: `league_report::verify`), printing each check that passed. Exits 0
//! only when every check agrees.

use std::path::PathBuf;

use clap::Args;
use league_report::verify::check;

#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// The results folder to check (`results/<league_id>`, as `league run` or `league report` wrote it).
    pub folder: PathBuf,
}

pub async fn verify(args: VerifyArgs) -> anyhow::Result<()> {
    let checked = check(&args.folder, &mut |line| println!("ok  {line}"))?;
    match checked {
        Ok(()) => {
            println!("{}: every check agrees", args.folder.display());
            Ok(())
        }
        Err(disagreement) => anyhow::bail!("{} does not verify: {disagreement}", args.folder.display()),
    }
}
