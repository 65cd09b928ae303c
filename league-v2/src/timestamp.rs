//! league.v2 timestamps: ISO-8601 in UTC (`…Z` or `…+00:00`). What real agents send instead is sorted
//! into forms whose meaning is still clear (accepted in lenient mode, with a warning) and forms that are
//! not (E021 in both modes). No calendar crate: the grammar is small and this is the only place it lives.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How a timestamp an agent sent reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The specification's form.
    Utc,
    /// A UTC instant written another way (e.g. `20261121T090456Z`, `…+00:00Z`): the named variant.
    UtcVariant(&'static str),
    /// A valid instant with a non-UTC offset: the specification requires UTC.
    NonUtc,
    /// Not a timestamp we can place in time (no zone, or not a date).
    Invalid,
}

/// Reads `text`.
pub fn read(text: &str) -> Reading {
    let bytes = text.as_bytes();
    if let Some(rest) = extended(bytes) {
        return zone(rest, false);
    }
    if let Some(rest) = basic(bytes) {
        return match zone(rest, true) {
            Reading::Utc => Reading::UtcVariant("basic_format"),
            other => other,
        };
    }
    Reading::Invalid
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]`; returns what follows.
fn extended(b: &[u8]) -> Option<&[u8]> {
    if b.len() < 19 {
        return None;
    }
    let date_ok = digits(&b[0..4]) && b[4] == b'-' && digits(&b[5..7]) && b[7] == b'-' && digits(&b[8..10]);
    let sep_ok = matches!(b[10], b'T' | b't' | b' ');
    let time_ok =
        digits(&b[11..13]) && b[13] == b':' && digits(&b[14..16]) && b[16] == b':' && digits(&b[17..19]);
    if !(date_ok
        && sep_ok
        && time_ok
        && valid(&b[0..4], &b[5..7], &b[8..10], &b[11..13], &b[14..16], &b[17..19]))
    {
        return None;
    }
    Some(fraction(&b[19..]))
}

/// `YYYYMMDDTHHMMSS[.fff]`; returns what follows.
fn basic(b: &[u8]) -> Option<&[u8]> {
    if b.len() < 15 || !digits(&b[0..8]) || !matches!(b[8], b'T' | b't') || !digits(&b[9..15]) {
        return None;
    }
    if !valid(&b[0..4], &b[4..6], &b[6..8], &b[9..11], &b[11..13], &b[13..15]) {
        return None;
    }
    Some(fraction(&b[15..]))
}

fn fraction(b: &[u8]) -> &[u8] {
    match b.first() {
        Some(b'.' | b',') => {
            let end = b[1..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .map_or(b.len(), |p| p + 1);
            if end > 1 { &b[end..] } else { b }
        }
        _ => b,
    }
}

fn zone(rest: &[u8], basic: bool) -> Reading {
    match rest {
        b"Z" => Reading::Utc,
        b"z" => Reading::UtcVariant("lowercase_z"),
        b"+00:00" | b"-00:00" if !basic => Reading::Utc,
        b"+00:00Z" | b"+00:00z" => Reading::UtcVariant("offset_and_z"),
        b"+0000" | b"+00" => Reading::UtcVariant("short_offset"),
        [b'+' | b'-', h1, h2, b':', m1, m2] | [b'+' | b'-', h1, h2, m1, m2]
            if digits(&[*h1, *h2, *m1, *m2]) =>
        {
            Reading::NonUtc
        }
        _ => Reading::Invalid,
    }
}

fn digits(b: &[u8]) -> bool {
    b.iter().all(u8::is_ascii_digit)
}

fn number(b: &[u8]) -> u32 {
    b.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'))
}

fn valid(year: &[u8], month: &[u8], day: &[u8], hour: &[u8], minute: &[u8], second: &[u8]) -> bool {
    let (year, month, day) = (number(year), number(month), number(day));
    (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && number(hour) < 24
        && number(minute) < 60
        && number(second) < 61
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `at` in the specification's form, to the second: `2026-11-21T08:53:37Z`.
pub fn format(at: SystemTime) -> String {
    let seconds = at.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Now, in the specification's form. Every message the league sends carries one, so each thread keeps
/// the text of the current second instead of formatting it for each message.
pub fn now() -> String {
    thread_local! {
        static CURRENT: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
    }
    let at = SystemTime::now();
    let second = at.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs();
    CURRENT.with_borrow_mut(|(formatted_at, text)| {
        if *formatted_at != second {
            *text = format(at);
            *formatted_at = second;
        }
        text.clone()
    })
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specification_form_and_its_utc_variants() {
        for text in [
            "2026-11-21T08:53:37Z",
            "2026-11-21T09:04:56.625259+00:00",
            "2026-11-21T08:53:37.1-00:00",
        ] {
            assert_eq!(read(text), Reading::Utc, "{text}");
        }
        // Seen in peer-b's traffic.
        assert_eq!(read("20261121T090456Z"), Reading::UtcVariant("basic_format"));
        assert_eq!(
            read("2026-11-21T09:04:41.501159+00:00Z"),
            Reading::UtcVariant("offset_and_z")
        );
        assert_eq!(read("2026-11-21 08:53:37Z"), Reading::Utc);
        assert_eq!(read("2026-11-21T08:53:37z"), Reading::UtcVariant("lowercase_z"));
    }

    #[test]
    fn other_zones_and_nonsense() {
        assert_eq!(read("2026-11-21T10:53:37+02:00"), Reading::NonUtc);
        assert_eq!(read("2026-11-21T10:53:37-0500"), Reading::NonUtc);
        for text in [
            "2026-11-21T08:53:37",
            "yesterday",
            "",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-11-21T24:00:00Z",
            "2026-11-21T08:53:37+2:00",
            "2026-11-21T08:53:37ZZ",
        ] {
            assert_eq!(read(text), Reading::Invalid, "{text}");
        }
    }

    #[test]
    fn formats_in_the_specification_form() {
        assert_eq!(format(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let at = UNIX_EPOCH + Duration::from_secs(1_795_251_217); // 2026-11-21T08:53:37Z
        assert_eq!(format(at), "2026-11-21T08:53:37Z");
        assert_eq!(read(&format(at)), Reading::Utc);
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(format(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn now_is_the_current_second_however_often_it_is_asked() {
        let before = format(SystemTime::now());
        let first = now();
        let second = now();
        let after = format(SystemTime::now());
        // The form sorts as the instants do.
        assert!(
            before <= first && first <= second && second <= after,
            "{before} {first} {second} {after}"
        );
        assert_eq!(read(&second), Reading::Utc);
    }
}
