//! Bounded exponential backoff and `Retry-After`.

use std::time::{Duration, SystemTime};

/// The wait before retry number `attempt` (0-based): `initial * 2^attempt`, at most `max`.
/// A `Retry-After` from the provider replaces it, also capped at `max`.
pub fn backoff_delay(
    attempt: u32,
    initial: Duration,
    max: Duration,
    retry_after: Option<Duration>,
) -> Duration {
    if let Some(d) = retry_after {
        return d.min(max);
    }
    let factor = 1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX);
    initial.saturating_mul(factor).min(max)
}

/// A `Retry-After` header value: delay-seconds or an HTTP date (RFC 9110 §10.2.3), relative to
/// `now`. A date in the past means "now" (zero). Anything else is ignored.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let i = Duration::from_millis(100);
        let m = Duration::from_secs(1);
        assert_eq!(backoff_delay(0, i, m, None), Duration::from_millis(100));
        assert_eq!(backoff_delay(2, i, m, None), Duration::from_millis(400));
        assert_eq!(backoff_delay(10, i, m, None), m);
        assert_eq!(backoff_delay(u32::MAX, i, m, None), m);
        assert_eq!(
            backoff_delay(0, i, m, Some(Duration::from_millis(700))),
            Duration::from_millis(700)
        );
        assert_eq!(backoff_delay(0, i, m, Some(Duration::from_secs(3600))), m);
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse_retry_after("5", now), Some(Duration::from_secs(5)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
    }
}
