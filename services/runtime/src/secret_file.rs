//! A secret kept in a file of its own, readable by its owner only (mode 0600): the referee
//! registration token that `league serve` or a deployment's manager generates at its first start and
//! its referees and the operator's commands read (ADR 0039).
//!
//! Created with `create_new` on a temporary name and linked into place, so two processes starting at
//! once never both write it: the second reads what the first wrote. Replaced (a rotation, ADR 0082) by
//! a rename over it, so a reader sees the old secret or the new one, never a part.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};

/// The secret in `path` (surrounding whitespace trimmed; an empty file is an error).
pub fn read(path: &Path) -> anyhow::Result<SecretString> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let secret = text.trim();
    anyhow::ensure!(!secret.is_empty(), "{} is empty", path.display());
    Ok(SecretString::from(secret.to_owned()))
}

/// The secret in `path`; if there is none yet, `generate`d and written there first (mode 0600, its
/// folder created). Returns it and whether it was generated now.
pub fn read_or_create(
    path: &Path,
    generate: impl FnOnce() -> anyhow::Result<SecretString>,
) -> anyhow::Result<(SecretString, bool)> {
    if path.exists() {
        return Ok((read(path)?, false));
    }
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let secret = generate()?;
    let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
    write_new(&temporary, &secret)?;
    // A hard link fails if another process created the file meanwhile: then its secret is the one.
    let linked = std::fs::hard_link(&temporary, path);
    std::fs::remove_file(&temporary).ok();
    match linked {
        Ok(()) => Ok((secret, true)),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok((read(path)?, false)),
        Err(error) => Err(error).with_context(|| format!("writing {}", path.display())),
    }
}

/// Replaces the secret in `path` by `secret` (mode 0600): written whole to a temporary file, then
/// renamed over the old one.
pub fn replace(path: &Path, secret: &SecretString) -> anyhow::Result<()> {
    let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::remove_file(&temporary).ok();
    let written = write_new(&temporary, secret).and_then(|()| {
        std::fs::rename(&temporary, path).with_context(|| format!("replacing {}", path.display()))
    });
    if written.is_err() {
        std::fs::remove_file(&temporary).ok();
    }
    written
}

/// Writes `secret` to `path`, which must not exist yet, readable by its owner only, and syncs it.
fn write_new(path: &Path, secret: &SecretString) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(secret.expose_secret().as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", path.display()))
}

/// Refuses the referee registration token variable set to nothing when nothing else supplies the token
/// (no token file, registration not open): a Kubernetes Secret whose value was left empty would
/// otherwise start a league whose referees all fail to register, again and again. Compose passes the
/// variable empty when `.env` leaves it unset, beside the file the manager keeps — that stays allowed.
pub fn refuse_empty_referee_token(
    token: Option<&SecretString>,
    file: Option<&Path>,
    open: bool,
) -> anyhow::Result<()> {
    let empty = token.is_some_and(|token| token.expose_secret().trim().is_empty());
    let no_file = file.is_none_or(|path| path.as_os_str().is_empty());
    anyhow::ensure!(
        !(empty && no_file && !open),
        "LEAGUE_REFEREE_REGISTRATION_TOKEN is set but empty, and no LEAGUE_REFEREE_REGISTRATION_TOKEN_FILE \
         keeps one: no referee could register. Set it to a token (openssl rand -hex 32) or unset it"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_secret_is_generated_once_and_only_its_owner_reads_it() {
        let dir = std::env::temp_dir().join(format!("league-secret-{}", std::process::id()));
        let path = dir.join("referee-token");
        let (first, generated) =
            read_or_create(&path, || Ok(SecretString::from("first".to_owned()))).expect("created");
        assert!(generated);
        let (again, generated) =
            read_or_create(&path, || Ok(SecretString::from("second".to_owned()))).expect("read");
        assert!(!generated);
        assert_eq!(again.expose_secret(), first.expose_secret());
        let mode = std::fs::metadata(&path).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        replace(&path, &SecretString::from("rotated".to_owned())).expect("replaced");
        assert_eq!(read(&path).expect("read").expose_secret(), "rotated");
        let mode = std::fs::metadata(&path).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_empty_referee_token_is_refused_unless_a_file_or_open_registration_supplies_one() {
        let empty = SecretString::from("  ".to_owned());
        let token = SecretString::from("s3cret".to_owned());
        let refused = refuse_empty_referee_token(Some(&empty), None, false).expect_err("refused");
        assert!(
            refused
                .to_string()
                .contains("LEAGUE_REFEREE_REGISTRATION_TOKEN is set but empty"),
            "{refused}"
        );
        assert!(refuse_empty_referee_token(Some(&empty), Some(Path::new("")), false).is_err());
        let file = Path::new("/var/lib/league/secrets/referee-token");
        assert!(refuse_empty_referee_token(Some(&empty), Some(file), false).is_ok());
        assert!(refuse_empty_referee_token(Some(&empty), None, true).is_ok());
        assert!(refuse_empty_referee_token(Some(&token), None, false).is_ok());
        assert!(refuse_empty_referee_token(None, None, false).is_ok());
    }
}
