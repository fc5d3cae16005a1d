// Model names in LiteLLM's price file and in transcripts. Included by the
// build script (which builds the name index from the file's keys) and by
// `pricing.rs` (which brings a transcript's model name to the same form), so
// both sides normalise names the same way. No `//!` here: `include!` puts
// this text among other items.

/// Bedrock's cross-region inference prefixes (`us.anthropic.claude-…`).
/// Note \[Price lookup\] in `pricing.rs` says why they are stripped.
const REGION_PREFIXES: [&str; 7] = ["us.", "eu.", "global.", "apac.", "au.", "jp.", "us-gov."];

/// The name a price-file key (or a transcript's model name) stands for,
/// lower case: without a `provider/` path, a Bedrock region prefix, the
/// `anthropic.` vendor prefix, or a `-v1:0` version suffix, and with
/// `@date` written `-date` (Note \[Price lookup\]).
fn model_alias(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    let mut n = lower.rsplit('/').next().unwrap_or(&lower);
    if let Some(rest) = REGION_PREFIXES.iter().find_map(|r| n.strip_prefix(r)) {
        n = rest;
    }
    n = n.strip_prefix("anthropic.").unwrap_or(n);
    if let Some(at) = n.rfind("-v") {
        let (major, minor) = n[at + 2..].split_once(':').unwrap_or((&n[at + 2..], "0"));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if digits(major) && digits(minor) {
            n = &n[..at];
        }
    }
    n.replace('@', "-")
}

/// `name` without a trailing release date (`-20250514` or `-2025-08-07`),
/// or `None` when it ends in no date.
fn undated(name: &str) -> Option<&str> {
    let is_date = |s: &str| {
        let b = s.as_bytes();
        match b.len() {
            8 => b.iter().all(u8::is_ascii_digit) && b.starts_with(b"20"),
            10 => {
                b.starts_with(b"20")
                    && b[4] == b'-'
                    && b[7] == b'-'
                    && [0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&i| b[i].is_ascii_digit())
            }
            _ => false,
        }
    };
    [9, 11].into_iter().find_map(|len| {
        let cut = name.len().checked_sub(len)?;
        let tail = name.get(cut..)?;
        let date = tail.strip_prefix('-')?;
        (is_date(date) && cut > 0).then(|| &name[..cut])
    })
}
