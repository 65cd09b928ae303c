//! JSON that many messages carry unchanged, serialized once and written into each message's bytes as it
//! is, instead of being deep-copied into each message's `Value` and serialized again: a league's
//! standings answered to every query until the gateway's cache refreshes them, and the
//! standings and round schedule the league sends every external player after each round. At thousands
//! of queries per second, or fifty players per round, that copy (hundreds of small allocations), its
//! serialization and its drop were most of the work.
//!
//! A message is still built as a `Value`. Where shared JSON goes, [`SharedJson::value`] puts a marker
//! string — but only inside [`scope`], whose messages are written by [`to_vec`], which replaces each
//! marker by the text it stands for. Outside a scope (MCP, batches, tests) it returns a copy of the value
//! itself, so every other consumer sees ordinary JSON. A marker is a control character, a random
//! per-process nonce and an index into the scope's list: no string an agent sends can be one by chance,
//! and a marker is only ever replaced within the scope that issued it.
//!
//! [`Recent`] keeps the shared JSON of the last few distinct inputs (e.g. the standings rows), so the
//! fifty identical standings updates of a round are converted once.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::Value;

/// A JSON value and its serialized text, both shared: a clone (one per recipient of a round's standings)
/// copies two pointers, not the value.
#[derive(Debug, Clone)]
pub struct SharedJson {
    value: Arc<Value>,
    text: Arc<str>,
}

thread_local! {
    /// The texts the markers of the response being built stand for, by index: present only while a
    /// [`scope`]'s future is being polled on this thread, so it follows the future from thread to thread
    /// as a task-local would, without tying this crate to a runtime.
    static SPLICES: RefCell<Option<Vec<Arc<str>>>> = const { RefCell::new(None) };
}

/// Random for each process (std's `RandomState` is seeded from the OS).
static NONCE: LazyLock<u64> = LazyLock::new(|| {
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
});

/// What a marker looks like once serialized, up to its index: `"\u0001shared-json:<nonce>:`.
static SERIALIZED_PREFIX: LazyLock<String> =
    LazyLock::new(|| format!("\"\\u0001shared-json:{:016x}:", *NONCE));

/// The search for [`SERIALIZED_PREFIX`], prepared once: `memmem::find` prepares a searcher on every call
/// (callgrind, 40 external players: 12 M instructions for 7,880 requests; the gateway 1,593 M → 1,574 M
/// with this one).
static PREFIX_FINDER: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(SERIALIZED_PREFIX.as_bytes()));

impl SharedJson {
    pub fn new(value: Value) -> Self {
        let text = serde_json::to_string(&value).unwrap_or_else(|_| "null".to_owned());
        Self {
            value: Arc::new(value),
            text: text.into(),
        }
    }

    /// JSON text to be written back exactly as it came (a numeric id whose digits `value`, a float,
    /// would round).
    pub(crate) fn verbatim(value: Value, text: &str) -> Self {
        Self {
            value: Arc::new(value),
            text: text.into(),
        }
    }

    /// The value, to put in a response: a marker within [`scope`], a copy elsewhere.
    pub fn value(&self) -> Value {
        SPLICES
            .try_with(|splices| {
                let mut splices = splices.borrow_mut();
                let splices = splices.as_mut()?;
                let index = match splices.iter().position(|text| Arc::ptr_eq(text, &self.text)) {
                    Some(index) => index,
                    None => {
                        splices.push(self.text.clone());
                        splices.len() - 1
                    }
                };
                Some(Value::String(format!("\u{1}shared-json:{:016x}:{index}", *NONCE)))
            })
            .ok()
            .flatten()
            .unwrap_or_else(|| Value::clone(&self.value))
    }
}

/// Runs `build` (which builds a response and writes it with [`to_vec`]) with markers enabled.
pub async fn scope<F: Future>(build: F) -> F::Output {
    let mut build = std::pin::pin!(build);
    let mut splices = Some(Vec::new());
    std::future::poll_fn(move |cx| {
        let _entered = Entered::new(&mut splices);
        build.as_mut().poll(cx)
    })
    .await
}

/// One poll of a [`scope`]'s future: the scope's texts are the thread's while it lasts, and whatever
/// was there before (an enclosing scope's, or none) is put back when it ends, a panic included.
struct Entered<'a> {
    splices: &'a mut Option<Vec<Arc<str>>>,
}

impl<'a> Entered<'a> {
    fn new(splices: &'a mut Option<Vec<Arc<str>>>) -> Self {
        Self::swap(splices);
        Self { splices }
    }

    fn swap(splices: &mut Option<Vec<Arc<str>>>) {
        // Only when the thread is being torn down is the slot gone; there is nothing to swap then.
        let _ = SPLICES.try_with(|current| std::mem::swap(&mut *current.borrow_mut(), splices));
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        Self::swap(self.splices);
    }
}

/// Serializes `message`, the markers of the current scope replaced by their texts.
pub fn to_vec<T: serde::Serialize + ?Sized>(message: &T) -> Vec<u8> {
    // A league.v2 message is most of a kilobyte: room for it at once, not four doublings from serde's 128.
    let mut bytes = Vec::with_capacity(1024);
    if serde_json::to_writer(&mut bytes, message).is_err() {
        bytes.clear();
    }
    SPLICES
        .try_with(|splices| {
            let texts = splices.borrow();
            let texts = texts.as_deref()?;
            (!texts.is_empty()).then(|| splice(&bytes, texts))
        })
        .ok()
        .flatten()
        .unwrap_or(bytes)
}

/// The shared JSON of the last few distinct inputs.
#[derive(Debug)]
pub(crate) struct Recent<K> {
    entries: Mutex<VecDeque<(K, SharedJson)>>,
    capacity: usize,
}

impl<K> Recent<K> {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: Mutex::new(VecDeque::with_capacity(capacity)),
            capacity,
        }
    }

    /// The shared JSON of the input `is` recognises: remembered, or built from `key()` (and remembered
    /// under it).
    pub(crate) fn get(
        &self,
        is: impl Fn(&K) -> bool,
        key: impl FnOnce() -> K,
        build: impl FnOnce(&K) -> Value,
    ) -> SharedJson {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, shared)) = entries.iter().find(|(known, _)| is(known)) {
            return shared.clone();
        }
        let key = key();
        let shared = SharedJson::new(build(&key));
        if entries.len() >= self.capacity {
            entries.pop_front();
        }
        entries.push_back((key, shared.clone()));
        shared
    }
}

fn splice(bytes: &[u8], texts: &[Arc<str>]) -> Vec<u8> {
    let prefix = SERIALIZED_PREFIX.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + texts.iter().map(|t| t.len()).sum::<usize>());
    let mut rest = bytes;
    while let Some(at) = PREFIX_FINDER.find(rest) {
        let after = &rest[at + prefix.len()..];
        let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
        let text = std::str::from_utf8(&after[..digits])
            .ok()
            .and_then(|index| index.parse::<usize>().ok())
            .and_then(|index| texts.get(index))
            .filter(|_| after.get(digits) == Some(&b'"'));
        match text {
            Some(text) => {
                out.extend_from_slice(&rest[..at]);
                out.extend_from_slice(text.as_bytes());
                rest = &after[digits + 1..];
            }
            None => {
                out.extend_from_slice(&rest[..at + prefix.len()]);
                rest = after;
            }
        }
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn standings() -> SharedJson {
        SharedJson::new(
            json!({"round_id": 2, "standings": [{"player_id": "P01", "display_name": "a \"b\""}]}),
        )
    }

    #[tokio::test]
    async fn within_a_scope_the_text_is_spliced_in() {
        let shared = standings();
        let written = scope(async {
            let response = json!({"jsonrpc": "2.0", "result": {"data": shared.value(), "again": shared.value()}, "id": 1});
            assert!(response["result"]["data"].is_string(), "a marker while building");
            to_vec(&response)
        })
        .await;
        let read: Value = serde_json::from_slice(&written).expect("valid JSON");
        assert_eq!(read["result"]["data"], shared.value());
        assert_eq!(read["result"]["again"], shared.value());
        assert_eq!(read["id"], 1);
    }

    #[tokio::test]
    async fn outside_a_scope_it_is_the_value_itself() {
        let shared = standings();
        let response = json!({"data": shared.value()});
        assert_eq!(response["data"], shared.value());
        assert_eq!(to_vec(&response), serde_json::to_vec(&response).expect("json"));
    }

    #[tokio::test]
    async fn recent_inputs_are_converted_once() {
        let recent = Recent::new(2);
        let converted = std::sync::atomic::AtomicU32::new(0);
        let build = |n: &u32| {
            converted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            json!({"n": n})
        };
        let get = |n: u32| recent.get(|known| *known == n, || n, build);
        let first = get(1);
        let again = get(1);
        assert!(Arc::ptr_eq(&first.text, &again.text));
        assert_eq!(again.value(), json!({"n": 1}));
        get(2);
        get(3); // 1 is forgotten
        get(1);
        assert_eq!(converted.load(std::sync::atomic::Ordering::SeqCst), 4);
        // The same text twice in one message is listed once.
        let written = scope(async {
            let message = json!([first.value(), again.value()]);
            assert_eq!(
                SPLICES.with_borrow(|splices| splices.as_ref().map(Vec::len)),
                Some(1)
            );
            to_vec(&message)
        })
        .await;
        let read: Value = serde_json::from_slice(&written).expect("valid JSON");
        assert_eq!(read, json!([{"n": 1}, {"n": 1}]));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_scope_holds_across_awaits_and_scopes_nest() {
        let (first, second) = (standings(), SharedJson::new(json!({"second": 2})));
        let nested = SharedJson::new(json!({"nested": true}));
        let (inner, outer) = tokio::spawn(async move {
            scope(async {
                let before = first.value();
                // Each yield is another poll, possibly on another worker thread.
                for _ in 0..8 {
                    tokio::task::yield_now().await;
                }
                let inner = scope(async {
                    tokio::task::yield_now().await;
                    to_vec(&json!({"inner": nested.value()}))
                })
                .await;
                let outer = to_vec(&json!({"before": before, "after": second.value()}));
                (inner, outer)
            })
            .await
        })
        .await
        .expect("the task finishes");
        let inner: Value = serde_json::from_slice(&inner).expect("valid JSON");
        assert_eq!(inner, json!({"inner": {"nested": true}}));
        // The marker made before the awaits still stands for its own text, not for one listed after.
        let outer: Value = serde_json::from_slice(&outer).expect("valid JSON");
        assert_eq!(outer["before"], standings().value());
        assert_eq!(outer["after"], json!({"second": 2}));
        // Nothing of a scope is left on this thread.
        assert!(SPLICES.with_borrow(Option::is_none));
    }

    #[tokio::test]
    async fn look_alike_strings_stay_as_they_are() {
        let shared = standings();
        let forged = [
            // Another process's nonce, an index out of range, a marker with more after it.
            "\u{1}shared-json:0000000000000000:0".to_owned(),
            format!("\u{1}shared-json:{:016x}:7", *NONCE),
            format!("\u{1}shared-json:{:016x}:0 and more", *NONCE),
        ];
        let written = scope(async {
            let response = json!({"forged": forged, "data": shared.value()});
            to_vec(&response)
        })
        .await;
        let read: Value = serde_json::from_slice(&written).expect("valid JSON");
        assert_eq!(read["forged"], json!(forged));
        assert_eq!(read["data"], shared.value());
    }
}
