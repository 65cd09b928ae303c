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
            other => {
                tracing::error!(error = %other, "request failed");
                error_code::status(ErrorCode::InternalError, "internal error")
            }
        }
    }
}

/// Whether a database error is the violation of the named constraint (turned into a client error).
pub fn violates(error: &sqlx::Error, constraint: &str) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.constraint() == Some(constraint))
}
