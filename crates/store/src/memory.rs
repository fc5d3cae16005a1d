//! Memory keys: `service:category` or `category` (seed 000).
//!
//! Note \[Memory keys\]: the schema types a memory key as any string, so the
//! store is where the format is enforced. A key is one or two parts split on
//! `:`; each part is trimmed and must be a non-empty run of ASCII letters,
//! digits, `-`, `_`, `.` or `/` (service names like `pg-replica`,
//! `home-assistant`, `media/jellyfin`). With two parts the first is the
//! service and the second the category (`jellyfin:timing`). Anything else (a
//! sentence, three parts, an empty part) is unmappable: it is reported as a
//! warning and not inserted. Categories are lowercased so `Timing` and
//! `timing` reinforce the same memory.

/// A parsed memory key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryKey {
    /// The service, for `service:category` keys.
    pub service: Option<String>,
    /// The category.
    pub category: String,
}

fn token(part: &str) -> Option<&str> {
    let t = part.trim();
    let ok = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    ok.then_some(t)
}

/// Parse a memory key; `None` when it cannot be mapped (see Note \[Memory keys\]).
pub fn parse_memory_key(key: &str) -> Option<MemoryKey> {
    let mut parts = key.split(':');
    let first = token(parts.next()?)?;
    match (parts.next(), parts.next()) {
        (None, _) => Some(MemoryKey {
            service: None,
            category: first.to_ascii_lowercase(),
        }),
        (Some(second), None) => Some(MemoryKey {
            service: Some(first.to_owned()),
            category: token(second)?.to_ascii_lowercase(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::unnecessary_wraps)] // the table compares against `Option`s
    fn key(service: Option<&str>, category: &str) -> Option<MemoryKey> {
        Some(MemoryKey {
            service: service.map(str::to_owned),
            category: category.to_owned(),
        })
    }

    #[test]
    fn keys_map_as_seed_000_says() {
        let cases = [
            ("jellyfin:timing", key(Some("jellyfin"), "timing")),
            ("remediation", key(None, "remediation")),
            (
                " pg-replica : Dependency ",
                key(Some("pg-replica"), "dependency"),
            ),
            (
                "media/jellyfin:behavior",
                key(Some("media/jellyfin"), "behavior"),
            ),
            ("some random string", None),
            ("a:b:c", None),
            (":timing", None),
            ("jellyfin:", None),
            ("", None),
        ];
        for (input, want) in cases {
            assert_eq!(parse_memory_key(input), want, "{input:?}");
        }
    }
}
