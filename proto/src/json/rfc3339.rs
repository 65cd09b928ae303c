//! A timestamp as proto3 JSON writes it: RFC 3339 in UTC, `2026-12-06T06:00:57.889668782Z`, with
//! the fraction in 0, 3, 6 or 9 digits (the fewest that keep it exact), formatted by hand into a buffer.
//! prost-types' `Display` writes the same text through eight `write!`s: in a stored transcript, whose
//! every entry has a time, that was half the cost of its JSON (43,000 of 89,000 instructions a
//! transcript, callgrind; docs/benchmarks.md).

use prost_types::Timestamp;

/// Seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range proto3 JSON allows.
const SECONDS: std::ops::RangeInclusive<i64> = -62_135_596_800..=253_402_300_799;

/// The longest text: `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`.
const LONGEST: usize = 30;

/// A timestamp's RFC 3339 text.
pub(crate) struct Rfc3339Text {
    bytes: [u8; LONGEST],
    len: usize,
}

impl Rfc3339Text {
    /// `at`'s text, or `None` out of the years 1–9999 (after normalising its nanoseconds).
    pub(crate) fn new(at: &Timestamp) -> Option<Rfc3339Text> {
        let mut at = *at;
        at.normalize();
        if !SECONDS.contains(&at.seconds) {
            return None;
        }
        let (year, month, day) = civil_from_days(at.seconds.div_euclid(86_400));
        let second_of_day = at.seconds.rem_euclid(86_400);
        let mut text = Rfc3339Text {
            bytes: *b"0000-00-00T00:00:00.000000000Z",
            len: 0,
        };
        text.digits(0, 4, year);
        text.digits(5, 2, month);
        text.digits(8, 2, day);
        text.digits(11, 2, second_of_day / 3_600);
        text.digits(14, 2, second_of_day / 60 % 60);
        text.digits(17, 2, second_of_day % 60);
        let nanos = i64::from(at.nanos);
        let fraction = match nanos {
            0 => 0,
            _ if nanos % 1_000_000 == 0 => 3,
            _ if nanos % 1_000 == 0 => 6,
            _ => 9,
        };
        if fraction == 0 {
            text.bytes[19] = b'Z';
            text.len = 20;
        } else {
            text.digits(20, fraction, nanos / 10_i64.pow(9 - fraction as u32));
            text.bytes[20 + fraction] = b'Z';
            text.len = 21 + fraction;
        }
        Some(text)
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits and the template's ASCII are ever written.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }

    /// Writes `value` (not negative, under 10^`width`) as `width` digits from `at`.
    fn digits(&mut self, at: usize, width: usize, mut value: i64) {
        for place in (at..at + width).rev() {
            self.bytes[place] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    }
}

/// `text` as a timestamp, if it is RFC 3339 as proto3 JSON reads it — `YYYY-MM-DDTHH:MM:SS`, a fraction
/// of one digit or more, then `Z` or an offset `±HH:MM`: prost-reflect's strict form, without the
/// lowercase `t`, the space or the date alone prost-types would take — within years 1–9999. The date
/// and time are read by prost-types, as reflection reads them, so both accept the same texts.
pub(crate) fn parse(text: &str) -> Option<Timestamp> {
    let (date_time, mut rest) = text.as_bytes().split_at_checked(19)?;
    let shaped = date_time
        .iter()
        .zip(b"0000-00-00T00:00:00")
        .all(|(byte, shape)| match shape {
            b'0' => byte.is_ascii_digit(),
            _ => byte == shape,
        });
    if !shaped {
        return None;
    }
    if let Some(fraction) = rest.strip_prefix(b".") {
        let digits = fraction.iter().take_while(|byte| byte.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        rest = &fraction[digits..];
    }
    let zone = match rest {
        b"Z" => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|digit| digit.is_ascii_digit()),
        _ => false,
    };
    if !zone {
        return None;
    }
    let at: Timestamp = text.parse().ok()?;
    SECONDS.contains(&at.seconds).then_some(at)
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// prost-types' text, which this must match.
    fn reference(at: &Timestamp) -> String {
        at.to_string()
    }

    fn check(seconds: i64, nanos: i32) {
        let at = Timestamp { seconds, nanos };
        let text = Rfc3339Text::new(&at).expect("in range");
        assert_eq!(text.as_str(), reference(&at), "{at:?}");
    }

    #[test]
    fn the_same_text_as_prost_types_at_the_edges() {
        for (seconds, nanos) in [
            (0, 0),
            (-1, 0),
            (-1, 999_999_999),
            (951_782_400, 0),         // 2000-02-29
            (951_868_800, 1_000_000), // 2000-03-01
            (4_107_542_400, 5_000),   // 2100-03-01
            (1_796_000_000, 889_668_782),
            (1_796_000_000, 120_000_000),
            (1_796_000_000, 120_000),
            (-62_135_596_800, 0),           // 0001-01-01
            (253_402_300_799, 999_999_999), // 9999-12-31T23:59:59.999999999
            (1, -1),                        // normalised to 0.999999999
            (0, 1_500_000_000),             // normalised to 1.5
        ] {
            check(seconds, nanos);
        }
    }

    #[test]
    fn the_same_text_as_prost_types_over_the_whole_range() {
        // A step of 61 days and 7,919 seconds lands on every month and weekday of 1–9999, at every
        // hour, minute and second; the fraction takes each of its widths in turn.
        let (first, last) = (*SECONDS.start(), *SECONDS.end());
        let mut seconds = first;
        let mut nanos: i32 = 0;
        let mut width = 0;
        while seconds <= last {
            let rounded = match width % 4 {
                0 => 0,
                1 => nanos / 1_000_000 * 1_000_000,
                2 => nanos / 1_000 * 1_000,
                _ => nanos,
            };
            check(seconds, rounded);
            seconds += 86_400 * 61 + 7_919;
            nanos = (nanos + 123_456_789) % 1_000_000_000;
            width += 1;
        }
    }

    #[test]
    fn out_of_range_is_none() {
        for (seconds, nanos) in [
            (*SECONDS.start() - 1, 0),
            (*SECONDS.end() + 1, 0),
            (*SECONDS.end(), 1_000_000_000),
            (i64::MIN, 0),
            (i64::MAX, 0),
        ] {
            assert!(
                Rfc3339Text::new(&Timestamp { seconds, nanos }).is_none(),
                "{seconds} {nanos}"
            );
        }
    }
}
