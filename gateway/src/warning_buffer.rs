//! Compliance warnings on their way to the manager: the deviations lenient mode accepted
//! (league_v2::compliance), merged per agent and kind so a chatty agent costs one row update per flush,
//! not one per message, and written every [`FLUSH_INTERVAL`] (app.rs).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use league_proto::v2::ComplianceWarning;
use league_v2::compliance::{Deviation, KINDS};

/// Warnings waiting to be written to the manager.
#[derive(Debug, Default)]
pub struct WarningBuffer {
    /// (agent, kind) → (latest example, count).
    pending: Mutex<HashMap<(String, &'static str), Pending>>,
}

type Pending = (String, u64);

impl WarningBuffer {
    pub(crate) fn record(&self, agent_id: &str, deviations: impl IntoIterator<Item = Deviation>) {
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        for deviation in deviations {
            tracing::debug!(agent_id, kind = deviation.kind, detail = %deviation.detail, "compliance warning");
            let entry = pending
                .entry((agent_id.to_owned(), deviation.kind))
                .or_insert_with(|| (String::new(), 0));
            entry.0 = deviation.detail;
            entry.1 += 1;
        }
    }

    /// Everything recorded since the last call.
    pub fn take(&self) -> Vec<ComplianceWarning> {
        let Ok(mut pending) = self.pending.lock() else {
            return Vec::new();
        };
        pending
            .drain()
            .map(|((agent_id, kind), (detail, count))| ComplianceWarning {
                agent_id,
                kind: kind.to_owned(),
                detail,
                count,
                ..ComplianceWarning::default()
            })
            .collect()
    }

    /// Puts back warnings a flush could not deliver.
    pub(crate) fn restore(&self, warnings: Vec<ComplianceWarning>) {
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        for warning in warnings {
            let Some(kind) = KINDS.iter().find(|k| **k == warning.kind) else {
                continue;
            };
            let entry = pending
                .entry((warning.agent_id, kind))
                .or_insert_with(|| (warning.detail, 0));
            entry.1 += warning.count;
        }
    }
}

/// How often buffered warnings go to the manager.
pub(crate) const FLUSH_INTERVAL: Duration = Duration::from_millis(500);

#[cfg(test)]
mod tests {
    use league_proto::ErrorCode;
    use league_v2::compliance::kinds;

    use super::*;

    #[test]
    fn the_buffer_merges_per_agent_and_kind() {
        let buffer = WarningBuffer::default();
        let deviation = |detail: &str| Deviation {
            kind: kinds::FIELD_ALIAS,
            detail: detail.into(),
            strict_error: ErrorCode::MissingRequiredField,
        };
        buffer.record("P01", [deviation("a"), deviation("b")]);
        buffer.record("P02", [deviation("c")]);
        let mut taken = buffer.take();
        taken.sort_by(|a, b| a.agent_id.cmp(&b.agent_id));
        assert_eq!(taken.len(), 2);
        assert_eq!((taken[0].count, taken[0].detail.as_str()), (2, "b"));
        assert!(buffer.take().is_empty());
        buffer.restore(taken);
        assert_eq!(buffer.take().len(), 2);
    }
}
