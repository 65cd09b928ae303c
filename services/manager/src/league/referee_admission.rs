//! Who referees is the operator's decision (ADR 0039): a referee registers only with the referee
//! registration token, over gRPC (its bearer token) as through the gateway (REFEREE_REGISTER_REQUEST's
//! `auth_token`), whether it is one of the league's own referees or an external one. Otherwise a
//! tokenless caller could register a referee, claim every match and report whatever it liked. The token
//! is for registering only: a registered referee resumes and calls with its own id and token.
//!
//! The token is the operator's (`LEAGUE_REFEREE_REGISTRATION_TOKEN`), or kept in a file
//! (`LEAGUE_REFEREE_REGISTRATION_TOKEN_FILE`: generated from the OS CSPRNG at the first start, mode
//! 0600), or, with neither, generated for this process. Only a local trial opens registration to
//! anyone (`LEAGUE_REFEREE_REGISTRATION_OPEN`, which `league run` sets). The operator reads the token
//! with `league referee-token` (`AgentsService.GetRefereeRegistrationToken`) and replaces it with
//! `league referee-token --rotate`, as `league revoke-referee` does, so that a revoked referee cannot
//! register anew with the token it knew (ADR 0082). The operator's own token is never replaced here:
//! it is changed where it is set.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use league_proto::ErrorCode;
use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;

use crate::config::RegistrationConfig;
use crate::error::{ManagerResult, reject};
use crate::tokens;

/// Whether a referee may register, and with what.
#[derive(Debug, Clone)]
pub enum RefereeAdmission {
    /// Anyone (a local trial).
    Open,
    /// Whoever presents the operator's token (`LEAGUE_REFEREE_REGISTRATION_TOKEN`).
    Operator(SecretString),
    /// Whoever presents the token kept in this file: read at every use, so that a rotation by any
    /// manager sharing the file holds for all of them, and for the referees that read it.
    Kept(PathBuf),
    /// Whoever presents the token generated for this process.
    Process(Arc<RwLock<SecretString>>),
}

/// What a rotation did.
#[derive(Debug)]
pub enum Rotation {
    /// The token is this new one.
    Rotated(SecretString),
    /// The token stays as it was, for this reason (in the operator's words).
    Kept(&'static str),
}

/// Why a rotation leaves the operator's own token as it is.
pub const OPERATORS_TOKEN: &str = "the referee registration token is the operator's \
    (LEAGUE_REFEREE_REGISTRATION_TOKEN): the league does not change it. Change it where it is set (the \
    Kubernetes Secret, compose's .env) and restart the manager";
/// Why there is nothing to rotate when registration is open.
pub const OPEN: &str = "referee registration is open (LEAGUE_REFEREE_REGISTRATION_OPEN, a local trial): \
    there is no token to rotate";

impl RefereeAdmission {
    /// The admission the configuration asks for (see the module's documentation).
    pub fn resolve(config: &RegistrationConfig) -> anyhow::Result<Self> {
        let token = config
            .referee_registration_token
            .clone()
            .filter(|token| !token.expose_secret().trim().is_empty());
        // A variable set to nothing names nothing.
        let file = config
            .referee_registration_token_file
            .as_ref()
            .filter(|path| !path.as_os_str().is_empty());
        if config.referee_registration_open {
            anyhow::ensure!(
                token.is_none() && file.is_none(),
                "LEAGUE_REFEREE_REGISTRATION_OPEN contradicts a referee registration token: set one or the other"
            );
            tracing::warn!("referee registration is open: anyone may register a referee (a local trial)");
            return Ok(Self::Open);
        }
        if let Some(token) = token {
            return Ok(Self::Operator(token));
        }
        if let Some(path) = file {
            let (_, generated) = league_runtime::secret_file::read_or_create(path, tokens::issue)?;
            if generated {
                tracing::info!(file = %path.display(), "referee registration token generated; `league referee-token` shows it");
            }
            return Ok(Self::Kept(path.clone()));
        }
        tracing::warn!(
            "referee registration token generated for this process only (`league referee-token` shows it); \
             set LEAGUE_REFEREE_REGISTRATION_TOKEN or LEAGUE_REFEREE_REGISTRATION_TOKEN_FILE to keep one"
        );
        Ok(Self::Process(Arc::new(RwLock::new(tokens::issue()?))))
    }

    /// The token referees must present now (`None`: registration is open).
    pub fn token(&self) -> ManagerResult<Option<SecretString>> {
        Ok(match self {
            Self::Open => None,
            Self::Operator(token) => Some(token.clone()),
            Self::Kept(path) => Some(league_runtime::secret_file::read(path)?),
            Self::Process(token) => Some(
                token
                    .read()
                    .map_err(|_| anyhow::anyhow!("the referee registration token's lock is poisoned"))?
                    .clone(),
            ),
        })
    }

    /// Whether a referee presenting `presented` may register (E020 otherwise; compared in constant time).
    pub fn check(&self, presented: Option<&SecretString>) -> ManagerResult<()> {
        let Some(required) = self.token()? else {
            return Ok(());
        };
        let matches = presented.is_some_and(|presented| {
            bool::from(
                presented
                    .expose_secret()
                    .as_bytes()
                    .ct_eq(required.expose_secret().as_bytes()),
            )
        });
        if matches {
            Ok(())
        } else {
            Err(reject(
                ErrorCode::PermissionDenied,
                "this league registers referees only with the operator's referee registration token \
                 (auth_token through the gateway, the bearer token over gRPC; `league referee-token` shows it)",
            ))
        }
    }

    /// Replaces the token by a new one, unless it is the operator's own setting or registration is
    /// open. Kept in its file, a new token outlives the manager; one for this process only is gone
    /// with it anyway.
    pub fn rotate(&self) -> ManagerResult<Rotation> {
        let token = tokens::issue()?;
        match self {
            Self::Open => return Ok(Rotation::Kept(OPEN)),
            Self::Operator(_) => return Ok(Rotation::Kept(OPERATORS_TOKEN)),
            Self::Kept(path) => league_runtime::secret_file::replace(path, &token)?,
            Self::Process(kept) => {
                *kept
                    .write()
                    .map_err(|_| anyhow::anyhow!("the referee registration token's lock is poisoned"))? =
                    token.clone();
            }
        }
        tracing::info!("referee registration token rotated");
        Ok(Rotation::Rotated(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_admits_only_its_bearer_and_open_admits_anyone() {
        let admission = RefereeAdmission::Operator(SecretString::from("s3cret".to_owned()));
        assert!(admission.check(None).is_err());
        assert!(
            admission
                .check(Some(&SecretString::from("s3cre".to_owned())))
                .is_err()
        );
        assert!(
            admission
                .check(Some(&SecretString::from("s3cret".to_owned())))
                .is_ok()
        );
        assert!(RefereeAdmission::Open.check(None).is_ok());
    }

    #[test]
    fn closed_unless_a_local_trial_opens_it() {
        let closed = RefereeAdmission::resolve(&RegistrationConfig::default()).expect("resolves");
        assert!(
            closed.token().expect("a token").is_some(),
            "a token generated by default"
        );
        let open = RegistrationConfig {
            referee_registration_open: true,
            ..RegistrationConfig::default()
        };
        assert!(
            RefereeAdmission::resolve(&open)
                .expect("resolves")
                .token()
                .expect("no token")
                .is_none()
        );
        let both = RegistrationConfig {
            referee_registration_open: true,
            referee_registration_token: Some(SecretString::from("t".to_owned())),
            ..RegistrationConfig::default()
        };
        assert!(RefereeAdmission::resolve(&both).is_err());
    }

    #[test]
    fn a_rotation_replaces_a_kept_or_generated_token_and_never_the_operators() {
        let presented = |token: &SecretString| SecretString::from(token.expose_secret().to_owned());
        let dir = std::env::temp_dir().join(format!("league-rotation-{}", std::process::id()));
        let kept = RegistrationConfig {
            referee_registration_token_file: Some(dir.join("referee-token")),
            ..RegistrationConfig::default()
        };
        for admission in [
            RefereeAdmission::resolve(&kept).expect("resolves"),
            RefereeAdmission::resolve(&RegistrationConfig::default()).expect("resolves"),
        ] {
            let old = admission.token().expect("read").expect("a token");
            let Rotation::Rotated(new) = admission.rotate().expect("rotates") else {
                panic!("{admission:?} rotates");
            };
            assert_ne!(new.expose_secret(), old.expose_secret());
            assert!(admission.check(Some(&presented(&old))).is_err(), "{admission:?}");
            assert!(admission.check(Some(&presented(&new))).is_ok(), "{admission:?}");
        }
        // A manager started again on the file has the rotated token.
        let again = RefereeAdmission::resolve(&kept).expect("resolves");
        let Rotation::Rotated(rotated) = again.rotate().expect("rotates") else {
            panic!("a kept token rotates");
        };
        assert_eq!(
            RefereeAdmission::resolve(&kept)
                .expect("resolves")
                .token()
                .expect("read")
                .expect("a token")
                .expose_secret(),
            rotated.expose_secret()
        );
        let operators = RefereeAdmission::Operator(SecretString::from("s3cret".to_owned()));
        assert!(matches!(operators.rotate(), Ok(Rotation::Kept(OPERATORS_TOKEN))));
        assert!(
            operators
                .check(Some(&SecretString::from("s3cret".to_owned())))
                .is_ok()
        );
        assert!(matches!(
            RefereeAdmission::Open.rotate(),
            Ok(Rotation::Kept(OPEN))
        ));
        std::fs::remove_dir_all(dir).ok();
    }
}
