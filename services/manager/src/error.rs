//! The manager's one error type, and how it becomes a gRPC status: rejections carry their league.v2
//! code; infrastructure failures are logged here once and reach the caller only as E022.

use league_proto::{ErrorCode, error_code};

#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    /// The caller's request was wrong or not allowed; nothing changed.
    #[error("{code}: {message}")]
    Rejected { code: ErrorCode, message: String },
    /// Already a status with its code (e.g. from reading credentials).
    #[error("{}", .0.message())]
    Status(#[from] tonic::Status),
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

pub type ManagerResult<T> = Result<T, ManagerError>;

/// A rejection with its league.v2 code.
pub fn reject(code: ErrorCode, message: impl Into<String>) -> ManagerError {
    ManagerError::Rejected {
        code,
        message: message.into(),
    }
}

impl From<ManagerError> for tonic::Status {
    fn from(error: ManagerError) -> Self {
        match error {
            ManagerError::Rejected { code, message } => error_code::status(code, message),
            ManagerError::Status(status) => status,
            // A lost database (restart, failover) is not a failed request: saying so with the retryable
            // E009 lets referees retry their reports instead of dropping a finished result, which would
            // otherwise be replayed from scratch once its lease expired. A retried report is safe: the
            // holder's repeat is a no-op that returns the stored result.
            ManagerError::Database(error) if database_unavailable(&error) => {
                tracing::warn!(%error, "database unavailable");
                error_code::status(
                    ErrorCode::ConnectionError,
                    "the database is unavailable; try again",
                )
            }
            other => {
                tracing::error!(error = %other, "request failed");
                error_code::status(ErrorCode::InternalError, "internal error")
            }
        }
    }
}

/// Whether `error` says the database could not be reached or dropped the connection (SQLSTATE classes
/// 08 "connection exception" and 57P "operator intervention", e.g. a shutdown or restart), rather than
/// that a statement failed.
pub fn database_unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => {
            true
        }
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

/// Whether a database error is the violation of the named constraint (turned into a client error).
pub fn violates(error: &sqlx::Error, constraint: &str) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.constraint() == Some(constraint))
}
