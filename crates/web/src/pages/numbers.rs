//! Numbers as people read them on the pages: counts with thousands
//! separators and durations in their largest units (issue 41: `41 m 48 s`,
//! `1,234,567 in`), one way everywhere.

/// `1234567` as `1,234,567` (a negative count keeps its sign).
pub(crate) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Milliseconds as `450 ms`, `12.3 s`, `41 m 48 s`, `2 h 03 m`, `3 d 04 h`.
pub(crate) fn span(ms: i64) -> String {
    let ms = ms.max(0);
    match ms {
        ..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{}.{} s", ms / 1000, ms % 1000 / 100),
        60_000..3_600_000 => format!("{} m {:02} s", ms / 60_000, ms % 60_000 / 1000),
        3_600_000..86_400_000 => {
            format!("{} h {:02} m", ms / 3_600_000, ms % 3_600_000 / 60_000)
        }
        _ => format!("{} d {:02} h", ms / 86_400_000, ms % 86_400_000 / 3_600_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_spans_read_as_people_write_them() {
        for (n, want) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (8_400, "8,400"),
            (1_234_567, "1,234,567"),
            (-12_345, "-12,345"),
            (i64::MIN, "-9,223,372,036,854,775,808"),
        ] {
            assert_eq!(thousands(n), want, "{n}");
        }
        for (ms, want) in [
            (-5, "0 ms"),
            (450, "450 ms"),
            (12_345, "12.3 s"),
            (2_508_000, "41 m 48 s"),
            (60_000, "1 m 00 s"),
            (7_380_000, "2 h 03 m"),
            (273_600_000, "3 d 04 h"),
            (i64::MAX, "106751991167 d 07 h"),
        ] {
            assert_eq!(span(ms), want, "{ms}");
        }
    }
}
