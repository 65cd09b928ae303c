//! A match transcript's protobuf bytes written straight as the proto3 JSON it is stored in: the same
//! text [`super::record_to_json_text`] writes of the `MatchTranscript` the bytes decode to, without
//! decoding them into messages first. On every report the manager decoded the transcript's `Struct`
//! payloads into maps of strings, only to write them out as JSON and drop them: a fifth of its CPU a
//! match (docs/adr/0094-a-transcript-stored-from-its-bytes.md).
//!
//! Bytes as prost writes them (each field once and in order, map keys in order) are read in one pass.
//! Anything else that protobuf allows (fields out of order or repeated, unknown fields, a `Struct`'s keys
//! out of order or twice) is decoded with prost and encoded again, which puts it in that form, and read
//! then: the text is the decoded message's whatever the bytes look like, and bytes that do not decode
//! are refused as prost refuses them.

use prost::Message;
use prost_types::Timestamp;

use super::JsonError;
use super::rfc3339::Rfc3339Text;
use crate::v2::{Direction, MatchState, MatchTranscript};

/// A transcript as stored: its JSON, and when its first and last entries were recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptText {
    pub json: String,
    /// The first entry's time (`None` without entries, or when the first has none).
    pub first_at: Option<Timestamp>,
    /// The last entry's time.
    pub last_at: Option<Timestamp>,
}

/// One message a transcript recorded, read from its bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordedMessage<'a> {
    direction: i32,
    pub player_id: &'a str,
    pub message_type: &'a str,
    pub error_code: &'a str,
    /// The payload's `Struct`, as bytes already read once.
    payload: Option<&'a [u8]>,
}

impl<'a> RecordedMessage<'a> {
    /// Its direction (an unknown number is `Unspecified`, as prost's getter has it).
    pub fn direction(&self) -> Direction {
        Direction::try_from(self.direction).unwrap_or_default()
    }

    /// The string its payload holds under `key`, if any.
    pub fn payload_text(&self, key: &str) -> Option<&'a str> {
        let mut fields = Fields::new(self.payload?);
        while let Ok(Some((_, Wire::Bytes(entry)))) = fields.next(1) {
            let mut entry = Fields::new(entry);
            let (mut name, mut value) = ("", None);
            while let Ok(Some((field, Wire::Bytes(bytes)))) = entry.next(0) {
                match field {
                    1 => name = std::str::from_utf8(bytes).ok()?,
                    _ => value = Some(bytes),
                }
            }
            if name == key {
                return match Fields::new(value?).next(0) {
                    Ok(Some((3, Wire::Bytes(text)))) => std::str::from_utf8(text).ok(),
                    _ => None,
                };
            }
        }
        None
    }
}

/// `bytes`, an encoded `league.v2.MatchTranscript`, as its stored JSON; `visit` is shown each message
/// it recorded, in order, once the whole text is written.
pub fn transcript_to_json_text(
    bytes: &[u8],
    mut visit: impl FnMut(&RecordedMessage<'_>),
) -> Result<TranscriptText, JsonError> {
    let mut messages = Vec::new();
    match Writer::transcript(bytes, &mut messages) {
        Ok(text) => {
            messages.iter().for_each(&mut visit);
            return Ok(text);
        }
        // Bytes read in one pass are not yet known to be canonical when a field proves invalid: a
        // later field may repeat it, and prost merges the two (a second `at` over an out-of-range
        // one). Only the canonical bytes' verdict is final; refusals are rare, so they pay for it.
        Err(Stop::Invalid(_) | Stop::NotCanonical) => {}
    }
    let decoded = MatchTranscript::decode(bytes)
        .map_err(|error| JsonError(format!("{NAME} does not decode: {error}")))?;
    let canonical = decoded.encode_to_vec();
    let mut messages = Vec::new();
    match Writer::transcript(&canonical, &mut messages) {
        Ok(text) => {
            messages.iter().for_each(&mut visit);
            Ok(text)
        }
        Err(Stop::Invalid(error)) => Err(error),
        Err(Stop::NotCanonical) => Err(JsonError(format!("{NAME} as prost encodes it was not read"))),
    }
}

const NAME: &str = "league.v2.MatchTranscript";

/// How deep prost decodes messages in messages (its `RECURSION_LIMIT`): a transcript nested deeper is
/// refused, and the one pass counts its levels as prost does so that it never reads one prost refuses.
pub(super) const RECURSION_LIMIT: u32 = 100;

/// The limit inside a message entered at `limit`, as prost's `DecodeContext` counts it.
fn enter(limit: u32) -> Pass<u32> {
    limit.checked_sub(1).ok_or(Stop::NotCanonical)
}

/// Why a pass stopped.
#[derive(Debug)]
enum Stop {
    /// Bytes prost would not have written: decoded and encoded again, then read.
    NotCanonical,
    /// A transcript proto3 JSON cannot write (a time out of the years 1–9999, a number not finite).
    Invalid(JsonError),
}

type Pass<T> = Result<T, Stop>;

/// A field's value as the wire has it.
#[derive(Debug, Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Fixed64([u8; 8]),
    Bytes(&'a [u8]),
}

/// The fields of one message, in the order prost writes them.
#[derive(Debug)]
struct Fields<'a> {
    rest: &'a [u8],
    last: u32,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes, last: 0 }
    }

    /// The next field, `None` at the end. A field before the one read last, or the same one again
    /// unless it is `repeated` (0: none is), or a wire type no field here has, is not canonical.
    #[inline]
    fn next(&mut self, repeated: u32) -> Pass<Option<(u32, Wire<'a>)>> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let field = u32::try_from(tag >> 3).map_err(|_| Stop::NotCanonical)?;
        if field == 0 || field < self.last || (field == self.last && field != repeated) {
            return Err(Stop::NotCanonical);
        }
        self.last = field;
        let wire = match tag & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                let (value, rest) = self.rest.split_first_chunk::<8>().ok_or(Stop::NotCanonical)?;
                self.rest = rest;
                Wire::Fixed64(*value)
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| Stop::NotCanonical)?;
                if len > self.rest.len() {
                    return Err(Stop::NotCanonical);
                }
                let (value, rest) = self.rest.split_at(len);
                self.rest = rest;
                Wire::Bytes(value)
            }
            _ => return Err(Stop::NotCanonical),
        };
        Ok(Some((field, wire)))
    }

    #[inline]
    fn varint(&mut self) -> Pass<u64> {
        // Tags, lengths and small numbers take one byte.
        if let Some((&byte, rest)) = self.rest.split_first()
            && byte < 0x80
        {
            self.rest = rest;
            return Ok(u64::from(byte));
        }
        let mut value = 0_u64;
        for (i, byte) in self.rest.iter().take(10).enumerate() {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                if i == 9 && *byte > 1 {
                    return Err(Stop::NotCanonical);
                }
                self.rest = &self.rest[i + 1..];
                return Ok(value);
            }
        }
        Err(Stop::NotCanonical)
    }
}

fn text(bytes: &[u8]) -> Pass<&str> {
    std::str::from_utf8(bytes).map_err(|_| Stop::NotCanonical)
}

fn invalid(why: &str) -> Stop {
    Stop::Invalid(JsonError(format!("{NAME} as JSON: {why}")))
}

/// The JSON, written as the bytes are read.
#[derive(Debug)]
struct Writer {
    out: String,
    /// Where a number's digits are written first.
    scratch: Vec<u8>,
}

impl Writer {
    fn transcript<'a>(bytes: &'a [u8], messages: &mut Vec<RecordedMessage<'a>>) -> Pass<TranscriptText> {
        // About three bytes of JSON to one of protobuf; room for the rest grows as strings do.
        let mut writer = Writer {
            out: String::with_capacity(bytes.len() * 3 + 64),
            scratch: Vec::new(),
        };
        let mut fields = Fields::new(bytes);
        let (mut match_id, mut entries) = ("", 0_usize);
        let (mut first_at, mut last_at) = (None, None);
        while let Some((field, wire)) = fields.next(2)? {
            match (field, wire) {
                (1, Wire::Bytes(id)) => match_id = text(id)?,
                (2, Wire::Bytes(entry)) => {
                    if entries == 0 {
                        writer.head(match_id);
                    } else {
                        writer.out.push(',');
                    }
                    let at = writer.entry(entry, enter(RECURSION_LIMIT)?, messages)?;
                    if entries == 0 {
                        first_at = at;
                    }
                    last_at = at;
                    entries += 1;
                }
                _ => return Err(Stop::NotCanonical),
            }
        }
        if entries == 0 {
            writer.head(match_id);
        }
        writer.out.push_str("]}");
        Ok(TranscriptText {
            json: writer.out,
            first_at,
            last_at,
        })
    }

    fn head(&mut self, match_id: &str) {
        self.out.push_str(r#"{"match_id":"#);
        self.string(match_id);
        self.out.push_str(r#","entries":["#);
    }

    /// One entry; its time.
    fn entry<'a>(
        &mut self,
        bytes: &'a [u8],
        limit: u32,
        messages: &mut Vec<RecordedMessage<'a>>,
    ) -> Pass<Option<Timestamp>> {
        self.out.push('{');
        let mut fields = Fields::new(bytes);
        let (mut at, mut one_of) = (None, false);
        while let Some((field, wire)) = fields.next(0)? {
            let Wire::Bytes(value) = wire else {
                return Err(Stop::NotCanonical);
            };
            match field {
                1 => {
                    enter(limit)?;
                    let time = timestamp(value)?;
                    let rfc3339 = Rfc3339Text::new(&time).ok_or_else(|| invalid("timestamp out of range"))?;
                    self.out.push_str(r#""at":""#);
                    self.out.push_str(rfc3339.as_str());
                    self.out.push('"');
                    at = Some(time);
                }
                // A oneof: prost keeps the last member, canonical bytes hold one.
                2 | 3 if one_of => return Err(Stop::NotCanonical),
                2 | 3 => {
                    one_of = true;
                    if at.is_some() {
                        self.out.push(',');
                    }
                    let inner = enter(limit)?;
                    if field == 2 {
                        self.out.push_str(r#""state_transition":"#);
                        self.transition(value)?;
                    } else {
                        self.out.push_str(r#""message":"#);
                        messages.push(self.message(value, inner)?);
                    }
                }
                _ => return Err(Stop::NotCanonical),
            }
        }
        self.out.push('}');
        Ok(at)
    }

    fn transition(&mut self, bytes: &[u8]) -> Pass<()> {
        let (mut from, mut to, mut reason) = (0, 0, "");
        let mut fields = Fields::new(bytes);
        while let Some((field, wire)) = fields.next(0)? {
            match (field, wire) {
                (1, Wire::Varint(number)) => from = number as i32,
                (2, Wire::Varint(number)) => to = number as i32,
                (3, Wire::Bytes(value)) => reason = text(value)?,
                _ => return Err(Stop::NotCanonical),
            }
        }
        self.out.push_str(r#"{"from":"#);
        self.enumeration(from, MatchState::try_from(from).map(|state| state.as_str_name()));
        self.out.push_str(r#","to":"#);
        self.enumeration(to, MatchState::try_from(to).map(|state| state.as_str_name()));
        self.out.push_str(r#","reason":"#);
        self.string(reason);
        self.out.push('}');
        Ok(())
    }

    fn message<'a>(&mut self, bytes: &'a [u8], limit: u32) -> Pass<RecordedMessage<'a>> {
        let mut message = RecordedMessage {
            direction: 0,
            player_id: "",
            message_type: "",
            error_code: "",
            payload: None,
        };
        let mut attempt = 0_u32;
        let mut fields = Fields::new(bytes);
        while let Some((field, wire)) = fields.next(0)? {
            match (field, wire) {
                (1, Wire::Varint(number)) => message.direction = number as i32,
                (2, Wire::Bytes(value)) => message.player_id = text(value)?,
                (3, Wire::Bytes(value)) => message.message_type = text(value)?,
                (4, Wire::Varint(number)) => attempt = number as u32,
                (5, Wire::Bytes(value)) => message.payload = Some(value),
                (6, Wire::Bytes(value)) => message.error_code = text(value)?,
                _ => return Err(Stop::NotCanonical),
            }
        }
        self.out.push_str(r#"{"direction":"#);
        let direction = Direction::try_from(message.direction).map(|direction| direction.as_str_name());
        self.enumeration(message.direction, direction);
        self.out.push_str(r#","player_id":"#);
        self.string(message.player_id);
        self.out.push_str(r#","message_type":"#);
        self.string(message.message_type);
        self.out.push_str(r#","attempt":"#);
        self.out.push_str(itoa::Buffer::new().format(attempt));
        if let Some(payload) = message.payload {
            self.out.push_str(r#","payload":"#);
            self.object(payload, enter(limit)?)?;
        }
        self.out.push_str(r#","error_code":"#);
        self.string(message.error_code);
        self.out.push('}');
        Ok(message)
    }

    /// A `Struct` as a plain object, its keys in order (a `BTreeMap`'s, as prost decodes it); `limit`
    /// is prost's inside it.
    fn object(&mut self, bytes: &[u8], limit: u32) -> Pass<()> {
        self.out.push('{');
        let mut fields = Fields::new(bytes);
        let mut previous: Option<&[u8]> = None;
        while let Some((field, wire)) = fields.next(1)? {
            let (1, Wire::Bytes(entry)) = (field, wire) else {
                return Err(Stop::NotCanonical);
            };
            // A map entry is a message of its own to prost, and so is its value when it has one.
            let inside_entry = enter(limit)?;
            let mut entry = Fields::new(entry);
            let (mut key, mut value): (&[u8], Option<&[u8]>) = (b"", None);
            while let Some((field, wire)) = entry.next(0)? {
                match (field, wire) {
                    (1, Wire::Bytes(bytes)) => key = bytes,
                    (2, Wire::Bytes(bytes)) => value = Some(bytes),
                    _ => return Err(Stop::NotCanonical),
                }
            }
            // In order and once each, as prost writes a BTreeMap (str orders by its bytes).
            if let Some(previous) = previous {
                if key <= previous {
                    return Err(Stop::NotCanonical);
                }
                self.out.push(',');
            }
            previous = Some(key);
            self.string(text(key)?);
            self.out.push(':');
            match value {
                Some(value) => self.value(value, enter(inside_entry)?)?,
                None => self.out.push_str("null"),
            }
        }
        self.out.push('}');
        Ok(())
    }

    /// A `google.protobuf.Value` as the JSON value it stands for (none at all is `null`); `limit` is
    /// prost's inside it.
    fn value(&mut self, bytes: &[u8], limit: u32) -> Pass<()> {
        let mut fields = Fields::new(bytes);
        let Some((field, wire)) = fields.next(0)? else {
            self.out.push_str("null");
            return Ok(());
        };
        // A oneof: prost keeps the last member, canonical bytes hold one.
        if !fields.rest.is_empty() {
            return Err(Stop::NotCanonical);
        }
        match (field, wire) {
            (1, Wire::Varint(_)) => self.out.push_str("null"),
            (2, Wire::Fixed64(bits)) => {
                let number = f64::from_le_bytes(bits);
                if !number.is_finite() {
                    return Err(invalid(
                        "cannot serialize non-finite double in google.protobuf.Value",
                    ));
                }
                // serde_json's own digits, as the derived serializer writes them.
                self.number(number);
            }
            (3, Wire::Bytes(value)) => self.string(text(value)?),
            (4, Wire::Varint(value)) => self.out.push_str(if value != 0 { "true" } else { "false" }),
            (5, Wire::Bytes(value)) => self.object(value, enter(limit)?)?,
            (6, Wire::Bytes(value)) => self.list(value, enter(limit)?)?,
            _ => return Err(Stop::NotCanonical),
        }
        Ok(())
    }

    fn list(&mut self, bytes: &[u8], limit: u32) -> Pass<()> {
        self.out.push('[');
        let mut fields = Fields::new(bytes);
        let mut first = true;
        while let Some((field, wire)) = fields.next(1)? {
            let (1, Wire::Bytes(value)) = (field, wire) else {
                return Err(Stop::NotCanonical);
            };
            if !first {
                self.out.push(',');
            }
            first = false;
            self.value(value, enter(limit)?)?;
        }
        self.out.push(']');
        Ok(())
    }

    fn number(&mut self, number: f64) {
        use serde_json::ser::{CompactFormatter, Formatter};
        self.scratch.clear();
        if CompactFormatter.write_f64(&mut self.scratch, number).is_ok()
            && let Ok(digits) = std::str::from_utf8(&self.scratch)
        {
            self.out.push_str(digits);
        }
    }

    /// An enum by its name, or its number when the contracts name none.
    fn enumeration(&mut self, number: i32, name: Result<&str, prost::UnknownEnumValue>) {
        match name {
            Ok(name) => {
                self.out.push('"');
                self.out.push_str(name);
                self.out.push('"');
            }
            Err(_) => self.out.push_str(itoa::Buffer::new().format(number)),
        }
    }

    /// A JSON string, escaped as serde_json escapes it: `"`, `\` and the control characters, no other.
    fn string(&mut self, value: &str) {
        self.out.push('"');
        let mut start = 0;
        for (i, byte) in value.bytes().enumerate() {
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0x00..=0x1f => "",
                _ => continue,
            };
            self.out.push_str(&value[start..i]);
            if escape.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.out.push_str("\\u00");
                self.out.push(char::from(HEX[usize::from(byte >> 4)]));
                self.out.push(char::from(HEX[usize::from(byte & 0xf)]));
            } else {
                self.out.push_str(escape);
            }
            start = i + 1;
        }
        self.out.push_str(&value[start..]);
        self.out.push('"');
    }
}

/// A `google.protobuf.Timestamp`'s fields, as prost decodes them (an `int32` keeps the low 32 bits).
fn timestamp(bytes: &[u8]) -> Pass<Timestamp> {
    let mut time = Timestamp::default();
    let mut fields = Fields::new(bytes);
    while let Some((field, wire)) = fields.next(0)? {
        match (field, wire) {
            (1, Wire::Varint(seconds)) => time.seconds = seconds as i64,
            (2, Wire::Varint(nanos)) => time.nanos = nanos as i32,
            _ => return Err(Stop::NotCanonical),
        }
    }
    Ok(time)
}

#[cfg(test)]
mod tests;
