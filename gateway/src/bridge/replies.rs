//! Replies agents send as separate calls, matched to the bridge call waiting for them by message type,
//! match and sender. The waiter registers before the call goes out, so a reply that overtakes the
//! call's own HTTP response still finds it. Replies that reach another gateway replica come back through
//! the manager's relay (`WatchReplies`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use league_domain::{AgentId, MatchId, MessageType};
use league_manager_link::ManagerLink;
use league_proto::v2::{WatchRepliesRequest, WatchRepliesResponse};
use league_runtime::ShutdownSignal;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

/// What a reply is matched on (also the key a reply is relayed under between replicas: its text is the
/// same as when the ids were strings).
pub(crate) fn reply_key(kind: MessageType, match_id: MatchId, agent_id: &AgentId) -> String {
    format!("{}|{match_id}|{agent_id}", kind.as_str())
}

#[derive(Debug, Default)]
pub struct Replies {
    waiting: Mutex<HashMap<String, oneshot::Sender<Map<String, Value>>>>,
}

/// A registered wait; dropping it stops waiting.
#[derive(Debug)]
pub(crate) struct Waiter {
    replies: Arc<Replies>,
    key: String,
    receiver: Option<oneshot::Receiver<Map<String, Value>>>,
}

impl Waiter {
    /// The reply, or `None` when `limit` passes first.
    pub(crate) async fn reply(mut self, limit: Duration) -> Option<Map<String, Value>> {
        let receiver = self.receiver.take()?;
        tokio::time::timeout(limit, receiver).await.ok()?.ok()
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if let Ok(mut waiting) = self.replies.waiting.lock() {
            waiting.remove(&self.key);
        }
    }
}

impl Replies {
    /// Starts waiting for the reply `key` names (a newer wait for the same key replaces an older one).
    pub(crate) fn wait(self: &Arc<Self>, key: String) -> Waiter {
        let (sender, receiver) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(key.clone(), sender);
        }
        Waiter {
            replies: self.clone(),
            key,
            receiver: Some(receiver),
        }
    }

    /// Hands a reply to its waiter on this replica; false when none waits here.
    pub(crate) fn deliver(&self, key: &str, reply: Map<String, Value>) -> bool {
        let sender = self
            .waiting
            .lock()
            .ok()
            .and_then(|mut waiting| waiting.remove(key));
        sender.is_some_and(|sender| sender.send(reply).is_ok())
    }

    /// Receives replies relayed by other replicas until shutdown, reconnecting after failures.
    pub(crate) async fn watch(self: Arc<Self>, manager_link: ManagerLink, shutdown: ShutdownSignal) {
        let mut delay = Duration::from_millis(100);
        while !shutdown.is_triggered() {
            let stream = manager_link
                .agents
                .clone()
                .watch_replies(manager_link.as_operator(WatchRepliesRequest {}))
                .await;
            match stream {
                Ok(stream) => {
                    delay = Duration::from_millis(100);
                    let mut stream = stream.into_inner();
                    loop {
                        let next = tokio::select! {
                            next = stream.next() => next,
                            () = shutdown.clone().wait() => return,
                        };
                        match next {
                            Some(Ok(WatchRepliesResponse { reply: None })) => {}
                            Some(Ok(WatchRepliesResponse { reply: Some(relayed) })) => {
                                match serde_json::from_str(&relayed.message_json) {
                                    Ok(Value::Object(reply)) => {
                                        self.deliver(&relayed.key, reply);
                                    }
                                    _ => {
                                        tracing::warn!(key = %relayed.key, "relayed reply is not a JSON object")
                                    }
                                }
                            }
                            Some(Err(status)) => {
                                tracing::debug!(%status, "reply relay interrupted");
                                break;
                            }
                            None => break,
                        }
                    }
                }
                Err(status) => tracing::debug!(%status, "cannot watch relayed replies yet"),
            }
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = shutdown.clone().wait() => return,
            }
            delay = (delay * 2).min(Duration::from_secs(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(text: &str) -> AgentId {
        text.parse().expect("an agent id")
    }

    #[tokio::test]
    async fn a_reply_reaches_its_waiter_once() {
        let replies = Arc::new(Replies::default());
        let key = reply_key(MessageType::GameJoinAck, MatchId::new(1, 1), &agent("P01"));
        assert_eq!(key, "GAME_JOIN_ACK|R1M1|P01");
        let waiter = replies.wait(key.clone());
        let mut reply = Map::new();
        reply.insert("accept".into(), Value::Bool(true));
        assert!(replies.deliver(&key, reply.clone()));
        assert!(!replies.deliver(&key, reply.clone()), "delivered twice");
        assert_eq!(waiter.reply(Duration::from_secs(1)).await, Some(reply));
    }

    #[tokio::test]
    async fn a_dropped_waiter_stops_waiting() {
        let replies = Arc::new(Replies::default());
        let key = reply_key(
            MessageType::ChooseParityResponse,
            MatchId::new(1, 1),
            &agent("P02"),
        );
        drop(replies.wait(key.clone()));
        assert!(!replies.deliver(&key, Map::new()));
    }
}
