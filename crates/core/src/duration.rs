//! Durations as people write them in flags and rules files (`30s`, `5m`,
//! `2h`, `1d`, `1w`, `500ms`): one parser for `--since 7d`, `memories
//! --older-than`, and the alert rules' windows and cooldowns, so that they
//! all accept the same spellings.

/// `text` (a whole number and one unit: `ms`, `s`, `m`, `h`, `d`, `w`) in
/// milliseconds; `None` when it is not one or overflows.
pub fn parse_ms(text: &str) -> Option<i64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().ok()?;
    let per = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return None,
    };
    n.checked_mul(per)
}
