//! Native session files written by the agents themselves (Claude Code,
//! Codex, Gemini CLI), read from `../shared/corpus/native/` (see its
//! `SOURCES.md`; not copied into the repository). Skips with a message when
//! the corpus is absent.
//!
//! Every file must be detected as its format, decode without a skipped line
//! that the file does not really have, and report the tokens an independent
//! reading of the file gives (the same rules written again over
//! `serde_json::Value`: Claude, the last usage of each message id +
//! request id; Codex, the last cumulative total; Gemini, the per-message sum).
//! Three files are also checked against numbers computed outside Rust, with
//! Python (`json.loads` per line, the same rules), written down below.

// A test reads the corpus files; the core library itself does no I/O.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agentshape_core::decode::{DecodeOptions, Decoder, Format, summarize_reader};
use agentshape_core::summary::{SummaryBuilder, TokenCounts};
use serde_json::Value;

fn corpus() -> Option<PathBuf> {
    // `../shared/corpus/native` beside the workspace: the first ancestor of
    // this crate that has it (the workspace may be a worktree one level down).
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/corpus/native"))
        .find(|p| p.join("SOURCES.md").is_file())
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file());
    out.sort();
    out
}

/// Non-blank lines that are not a JSON object (what the decoder must skip).
fn bad_lines(bytes: &[u8]) -> u64 {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .filter(|l| !matches!(serde_json::from_slice::<Value>(l), Ok(Value::Object(_))))
        .count() as u64
}

fn n(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

fn claude_tokens(bytes: &[u8]) -> TokenCounts {
    let mut last: HashMap<(String, Option<String>), TokenCounts> = HashMap::new();
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v["type"] != "assistant" || v["isApiErrorMessage"] == true {
            continue;
        }
        let m = &v["message"];
        if m["model"] == "<synthetic>" || !m["usage"].is_object() {
            continue;
        }
        let u = &m["usage"];
        let key = (
            m["id"].as_str().unwrap_or_default().to_owned(),
            v["requestId"].as_str().map(str::to_owned),
        );
        last.insert(
            key,
            TokenCounts {
                input: n(u.get("input_tokens")),
                output: n(u.get("output_tokens")),
                cache_read: n(u.get("cache_read_input_tokens")),
                cache_write: n(u.get("cache_creation_input_tokens")),
                cache_write_1h: n(u["cache_creation"].get("ephemeral_1h_input_tokens")),
                reasoning: 0,
            },
        );
    }
    let mut total = TokenCounts::default();
    for c in last.values() {
        total.add(c);
    }
    total
}

/// Codex totals are cumulative per segment: a total that falls starts a
/// new one, and the segments' last totals add up.
fn codex_tokens(bytes: &[u8]) -> TokenCounts {
    let mut ended = TokenCounts::default();
    let mut last = TokenCounts::default();
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let t = &v["payload"]["info"]["total_token_usage"];
        if v["payload"]["type"] == "token_count" && t.is_object() {
            let now = TokenCounts {
                input: n(t.get("input_tokens")),
                output: n(t.get("output_tokens")),
                cache_read: n(t.get("cached_input_tokens")),
                reasoning: n(t.get("reasoning_output_tokens")),
                ..TokenCounts::default()
            };
            if now.input < last.input
                || now.output < last.output
                || now.cache_read < last.cache_read
            {
                ended.add(&last);
            }
            last = now;
        }
    }
    ended.add(&last);
    ended
}

fn gemini_tokens(bytes: &[u8]) -> TokenCounts {
    let v: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    let mut total = TokenCounts::default();
    for m in v["messages"].as_array().into_iter().flatten() {
        let t = &m["tokens"];
        if t.is_object() {
            total.add(&TokenCounts {
                input: n(t.get("input")) + n(t.get("tool")),
                output: n(t.get("output")) + n(t.get("thoughts")),
                cache_read: n(t.get("cached")),
                reasoning: n(t.get("thoughts")),
                ..TokenCounts::default()
            });
        }
    }
    total
}

fn decode_chunked(bytes: &[u8], chunk: usize) -> agentshape_core::RunSummary {
    let mut decoder = Decoder::new(Format::Auto, DecodeOptions::default());
    let mut builder = SummaryBuilder::new();
    for c in bytes.chunks(chunk) {
        decoder.feed(c, &mut |e| builder.push(e));
    }
    decoder.finish(&mut |e| builder.push(e));
    builder.finish(decoder.format())
}

#[test]
fn every_native_corpus_file_decodes_as_its_format() {
    let Some(root) = corpus() else {
        println!(
            "skipped: ../shared/corpus/native not found (looked in the ancestors of {})",
            env!("CARGO_MANIFEST_DIR")
        );
        return;
    };
    let mut seen = 0;
    for (dir, format, tokens) in [
        (
            "claude",
            Format::ClaudeSession,
            claude_tokens as fn(&[u8]) -> TokenCounts,
        ),
        ("codex", Format::CodexRollout, codex_tokens),
        ("gemini", Format::GeminiChat, gemini_tokens),
    ] {
        for path in files(&root.join(dir)) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let s = summarize_reader(
                std::io::BufReader::new(&bytes[..]),
                Format::Auto,
                &DecodeOptions::default(),
            )
            .unwrap();
            assert_eq!(s.format, format, "{name}");
            let session = s
                .session
                .as_deref()
                .unwrap_or_else(|| panic!("{name}: no session"));
            let want_bad = if format == Format::GeminiChat {
                0
            } else {
                bad_lines(&bytes)
            };
            assert_eq!(s.skipped_lines, want_bad, "{name}: skipped lines");
            assert_eq!(session.tokens, tokens(&bytes), "{name}: tokens");
            if format != Format::GeminiChat {
                let typed: u64 = session.line_types.values().sum();
                // One type count per decoded object (a glued line holds several).
                if session.glued_lines == 0 {
                    assert_eq!(
                        typed, s.events,
                        "{name}: every object line has a type count"
                    );
                } else {
                    assert!(typed > s.events, "{name}");
                }
                assert_eq!(
                    s.lines,
                    s.events + s.skipped_lines + s.blank_lines,
                    "{name}: every line accounted for"
                );
            }
            if bytes.len() < 64 << 10 {
                assert_eq!(s, decode_chunked(&bytes, 1), "{name}: 1-byte chunks differ");
            }
            assert_eq!(s, decode_chunked(&bytes, 4093), "{name}: chunks differ");
            seen += 1;
        }
    }
    assert!(seen >= 30, "only {seen} corpus files");
}

/// Numbers computed with Python over the raw files (per line `json.loads`;
/// Claude: assistant lines, not `<synthetic>`/`isApiErrorMessage`, keyed by
/// `(message.id, requestId)`, the last line's usage kept, summed; Codex: the
/// last `event_msg/token_count` `info.total_token_usage`; Gemini: per message
/// `input+tool`, `output+thoughts`, `cached`, summed).
#[test]
fn corpus_tokens_match_numbers_computed_outside() {
    let Some(root) = corpus() else {
        println!("skipped: ../shared/corpus/native not found");
        return;
    };
    let cases = [
        // 1.0.51, 406 messages over 742 assistant lines. The first line of
        // each message gives output 24682, the sum of all lines 57426.
        (
            "claude/slopus__happy-cli__400429ba-c1e1-4ef5-a7ec-fe40608df53b.jsonl",
            [2972, 48584, 27_474_087, 1_257_229],
        ),
        // 1.0.98 with 405 sidechain lines; first-line output 49780, sum 77612.
        (
            "claude/d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
            [818, 51933, 3_647_854, 137_976],
        ),
        // 572 token_count totals; their sum would be 8912903652 input.
        (
            "codex/madshn__localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
            [33_810_485, 133_999, 31_621_504, 0],
        ),
        (
            "gemini/entireio__cli__12cbfeaa512b-0-gemini-session.json",
            [48965, 302, 35330, 0],
        ),
    ];
    for (file, [input, output, cache_read, cache_write]) in cases {
        let bytes = std::fs::read(root.join(file)).unwrap();
        let s = summarize_reader(&bytes[..], Format::Auto, &DecodeOptions::default()).unwrap();
        let t = s.session.as_deref().unwrap().tokens;
        assert_eq!(
            t,
            TokenCounts {
                input,
                output,
                cache_read,
                cache_write,
                ..t
            },
            "{file}"
        );
        assert_eq!(
            s.result.as_ref().unwrap().usage.output_tokens,
            output,
            "{file}"
        );
    }
}
