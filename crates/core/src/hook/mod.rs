//! Claude Code command hooks, the pure part (issue 30): what the hook
//! input says ([`input`]), the last assistant message of a session file when
//! the input lacks it ([`last_message`]), and the reason a blocked stop gives
//! the model ([`reason`], with [`shape`]'s one-line reminder of the schema).
//!
//! Reading stdin, the store, the clock and the exit code are the runtime's
//! and the CLI's; everything here is a function of bytes and values.

pub mod input;
pub mod last_message;
pub mod reason;
pub mod shape;

pub use input::{HookEvent, HookInput, InputError};
pub use last_message::LastMessage;
pub use reason::{BlockContext, MAX_REASON_BYTES, block_reason};
pub use shape::shape_line;

/// The fuzz body of the hook's pure part (the `hook` fuzz target; CI runs
/// it through proptest): `data` as hook input and, when it parses, its
/// message through extraction and the block reason (which must stay within
/// [`MAX_REASON_BYTES`]); `data` as a session file through
/// [`LastMessage`]. Must never panic.
///
/// # Panics
/// Only on a broken invariant: a reason over [`MAX_REASON_BYTES`].
pub fn fuzz_hook(data: &[u8]) {
    use crate::decode::{DecodeOptions, Decoder, Format};
    use crate::extract::{ExtractOptions, extract_text};
    if let Ok(input) = HookInput::parse(data) {
        let _ = input.event();
        let message = input.last_assistant_message.unwrap_or_default();
        let extraction = extract_text(&message, &ExtractOptions::default());
        let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let reason = block_reason(&BlockContext {
            extraction: &extraction,
            against: "the fuzz schema",
            schema: Some(&schema),
            empty: message.trim().is_empty(),
            block: 0,
            max_blocks: 3,
        });
        assert!(reason.len() <= MAX_REASON_BYTES);
    }
    for keep in [false, true] {
        let mut fold = LastMessage::new(keep);
        let mut d = Decoder::new(Format::ClaudeSession, DecodeOptions::default());
        d.feed(data, &mut |e| fold.push(&e));
        d.finish(&mut |e| fold.push(&e));
        let _ = fold.finish();
    }
}

#[cfg(test)]
mod fuzz_tests {
    use proptest::prelude::*;

    fn hook_ish() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"",
            "\\",
            " ",
            "\n",
            "```json\n",
            "```",
            "null",
            "true",
            "\"session_id\"",
            "\"last_assistant_message\"",
            "\"stop_hook_active\"",
            "\"hook_event_name\"",
            "\"Stop\"",
            "\"SubagentStop\"",
            "\"agent_type\"",
            "\"x\"",
            "1",
            "{\\\"a\\\": 1}",
            "\"type\":\"assistant\"",
            "\"message\"",
            "\"content\"",
            "\"text\"",
            "\"isSidechain\"",
            "\u{e9}",
            "\u{1F600}",
        ]);
        prop::collection::vec(pieces, 0..60).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..512)) {
            super::fuzz_hook(&data);
        }

        #[test]
        fn hook_ish_input_never_panics(text in hook_ish()) {
            super::fuzz_hook(text.as_bytes());
            let wrapped = serde_json::json!({"session_id": "s", "last_assistant_message": text});
            super::fuzz_hook(wrapped.to_string().as_bytes());
        }
    }
}
