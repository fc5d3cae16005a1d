//! Byte classes of 16 bytes at once, as bit masks: bit `k` of a mask is
//! set when byte `k` of the chunk is in the class.
//!
//! Note [Vector byte masks]: the string scans of `json` (quote, backslash,
//! control character) and the bracket scan of `extract::candidates` test
//! many bytes at once. Before, they did so with SWAR words (`json`'s
//! `stop_mask8`, ~120 instructions for 64 bytes, and `stop_bytes`, a word
//! at a time) or with a byte loop LLVM vectorised on its own but reduced
//! as a `u128` `trailing_zeros`. Here, on `x86_64`, each class is a few
//! SSE2 compares and one `pmovmskb` (16 bits for 16 bytes) through the
//! `safe_arch` crate: safe functions over the intrinsics, gated on the
//! target features the build enables at compile time (SSE2 is part of
//! `x86_64`), so the crate stays `forbid(unsafe_code)` and needs no run-time
//! detection. Other targets keep the forms these replaced (the SWAR words
//! and byte loops of `json`, the byte table of the bracket scan) and do
//! not build this module outside tests; its portable byte loops are the
//! tests' reference (`vector_masks_agree_with_the_portable_ones`).
//! Measured (callgrind, `extract --jsonl --json` on the 20,000-reply bench
//! corpus, output byte-identical, release with thin LTO): the unescaper's
//! 64-byte masks, [`string_stops`] as the first test of a plain run
//! (`json::plain_run_end`, `json::copy_plain`) and in `json::long_run_end`:
//! 1.030 → 0.931 billion instructions (−9.6%); `json::reply_of_line_into`
//! with what it calls 332.4 → 260.9 million, `json::unescape_into` 154.7 →
//! 110.3, `json::long_run_end` 75.7 → 29.2, `json::scan_string` 61.2 →
//! 54.1. Later uses: Note [Inlined string scans] in `json`, Note [Vector
//! bracket scan] in `extract::candidates`.

/// The bytes one mask covers.
pub const LANES: usize = 16;

/// Bit `k` set when byte `k` of `chunk` is `a`, `b`, a backslash or a
/// control character (below 0x20): where a JSON string's plain run ends.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn string_stops(chunk: &[u8; LANES], a: u8, b: u8) -> u32 {
    #[cfg(vector_bytes)]
    {
        vector::string_stops(chunk, a, b)
    }
    #[cfg(not(vector_bytes))]
    {
        portable::string_stops(chunk, a, b)
    }
}

/// [`string_stops`] for `"` alone: bit `k` set when byte `k` of `chunk` is
/// a double quote, a backslash or a control character.
///
/// Note [Quote or control in one test]: `v ^ 0x02` maps the control
/// characters (0x00 to 0x1f) onto themselves and the quote (0x22) onto
/// 0x20, and nothing else to 0x20 or below, so one unsigned `min` and
/// compare find both, where [`string_stops`] compares for the quote and
/// the control characters apart: a compare and an `or` fewer per 16
/// bytes. Used where the quote is `"` (the unescaper's 64-byte masks,
/// `json::scan_string`). Measured with Note [Escape walk] in `json`.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn quote_stops(chunk: &[u8; LANES]) -> u32 {
    #[cfg(vector_bytes)]
    {
        vector::quote_stops(chunk)
    }
    #[cfg(not(vector_bytes))]
    {
        portable::string_stops(chunk, b'"', b'"')
    }
}

/// Bit `k` set when byte `k` of `chunk` is one the bracket scan of
/// `extract::candidates` (`balanced_end`) stops at: a quote (`"` or `'`),
/// `/` or a bracket (`{ } [ ]`).
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn bracket_stops(chunk: &[u8; LANES]) -> u32 {
    #[cfg(vector_bytes)]
    {
        vector::bracket_stops(chunk)
    }
    #[cfg(not(vector_bytes))]
    {
        portable::bracket_stops(chunk)
    }
}

/// Bit `k` set when byte `k` of `chunk` is in base64's alphabet, standard
/// or URL-safe: a letter, a digit, `+`, `-`, `/` or `_` (the runs
/// `secrets::encoded` decodes; Note \[Base64 runs a block at a time\]
/// there).
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn base64_bytes(chunk: &[u8; LANES]) -> u32 {
    #[cfg(vector_bytes)]
    {
        vector::base64_bytes(chunk)
    }
    #[cfg(not(vector_bytes))]
    {
        portable::base64_bytes(chunk)
    }
}

/// The low bytes of the 16 UTF-16 units whose little-endian bytes are
/// `units` written to `out`, and bit `k` set when unit `k` is outside ASCII
/// (its byte in `out` is then not the unit's): a block of
/// `json::utf8_of_utf16le`, where the bits say how many bytes to keep.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn narrow_units(units: &[u8; 2 * LANES], out: &mut [u8; LANES]) -> u32 {
    #[cfg(vector_bytes)]
    {
        vector::narrow_units(units, out)
    }
    #[cfg(not(vector_bytes))]
    {
        portable::narrow_units(units, out)
    }
}

/// The 16 bytes of `chunk` widened to UTF-16 little-endian units in
/// `out` (each byte and a zero), and bit `k` set when byte `k` is outside
/// ASCII (its unit in `out` is then not a character): a block of
/// `json::utf16le_of`, where the bits say how many units to keep.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn widen_bytes(chunk: &[u8; LANES], out: &mut [u8; 2 * LANES]) -> u32 {
    #[cfg(vector_bytes)]
    {
        vector::widen_bytes(chunk, out)
    }
    #[cfg(not(vector_bytes))]
    {
        portable::widen_bytes(chunk, out)
    }
}

/// [`base64_bytes`] over 64 bytes: bit `k` of the `u64`.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn base64_bytes64(block: &[u8; 4 * LANES]) -> u64 {
    four_masks(block, base64_bytes)
}

/// [`string_stops`] for a quote over 64 bytes: bit `k` of the `u64`.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn string_stops64(block: &[u8; 4 * LANES]) -> u64 {
    four_masks(block, quote_stops)
}

/// The masks `of` the four chunks of `block`, as one `u64`.
#[allow(clippy::inline_always)]
#[inline(always)]
fn four_masks(block: &[u8; 4 * LANES], of: impl Fn(&[u8; LANES]) -> u32) -> u64 {
    let mut mask = 0u64;
    for k in 0..4 {
        if let Some(chunk) = block
            .get(LANES * k..LANES * (k + 1))
            .and_then(|c| <&[u8; LANES]>::try_from(c).ok())
        {
            mask |= u64::from(of(chunk)) << (LANES * k);
        }
    }
    mask
}

/// The two 16-byte halves of a 32-byte block.
#[cfg(vector_bytes)]
#[allow(clippy::inline_always)]
#[inline(always)]
fn halves(block: &[u8; 2 * LANES]) -> (&[u8; LANES], &[u8; LANES]) {
    fn whole(half: &[u8]) -> &[u8; LANES] {
        <&[u8; LANES]>::try_from(half).unwrap_or(&[0; LANES])
    }
    let (a, b) = block.split_at(LANES);
    (whole(a), whole(b))
}

/// The SIMD128 forms (Note [WebAssembly SIMD] in `.cargo/config.toml`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[path = "bytescan/wasm.rs"]
mod vector;

#[cfg(target_arch = "x86_64")]
mod vector {
    use safe_arch::{
        bitand_m128i, bitor_m128i, bitxor_m128i, cmp_eq_mask_i8_m128i, cmp_eq_mask_i16_m128i,
        load_unaligned_m128i, min_u8_m128i, move_mask_i8_m128i, pack_i16_to_i8_m128i,
        pack_i16_to_u8_m128i, set_splat_i8_m128i, set_splat_i16_m128i, store_unaligned_m128i,
        sub_i8_m128i, unpack_high_i8_m128i, unpack_low_i8_m128i, zeroed_m128i,
    };

    use super::{LANES, halves};

    #[allow(clippy::cast_possible_wrap)] // Lanes are bytes: the bits are kept.
    fn splat(c: u8) -> safe_arch::m128i {
        set_splat_i8_m128i(c as i8)
    }

    /// The mask of the high bits: 16 bits, so the cast keeps them all.
    #[allow(clippy::cast_sign_loss)]
    fn bits(v: safe_arch::m128i) -> u32 {
        move_mask_i8_m128i(v) as u32
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn string_stops(chunk: &[u8; LANES], a: u8, b: u8) -> u32 {
        let v = load_unaligned_m128i(chunk);
        // `min(v, 0x1f) == v` exactly where `v` is below 0x20 (unsigned).
        let control = cmp_eq_mask_i8_m128i(min_u8_m128i(v, splat(0x1f)), v);
        let quote = bitor_m128i(
            cmp_eq_mask_i8_m128i(v, splat(a)),
            cmp_eq_mask_i8_m128i(v, splat(b)),
        );
        let backslash = cmp_eq_mask_i8_m128i(v, splat(b'\\'));
        bits(bitor_m128i(bitor_m128i(control, quote), backslash))
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn quote_stops(chunk: &[u8; LANES]) -> u32 {
        let v = load_unaligned_m128i(chunk);
        // Control characters stay below 0x20, `"` becomes 0x20 (Note
        // [Quote or control in one test]).
        let x = bitxor_m128i(v, splat(0x02));
        let quote_or_control = cmp_eq_mask_i8_m128i(min_u8_m128i(x, splat(0x20)), x);
        let backslash = cmp_eq_mask_i8_m128i(v, splat(b'\\'));
        bits(bitor_m128i(quote_or_control, backslash))
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn bracket_stops(chunk: &[u8; LANES]) -> u32 {
        let v = load_unaligned_m128i(chunk);
        // `[` and `]` are `{` and `}` less 0x20: one `or` folds them.
        let folded = bitor_m128i(v, splat(0x20));
        let brackets = bitor_m128i(
            cmp_eq_mask_i8_m128i(folded, splat(b'{')),
            cmp_eq_mask_i8_m128i(folded, splat(b'}')),
        );
        let quotes = bitor_m128i(
            cmp_eq_mask_i8_m128i(v, splat(b'"')),
            cmp_eq_mask_i8_m128i(v, splat(b'\'')),
        );
        let slash = cmp_eq_mask_i8_m128i(v, splat(b'/'));
        bits(bitor_m128i(brackets, bitor_m128i(quotes, slash)))
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn narrow_units(units: &[u8; 2 * LANES], out: &mut [u8; LANES]) -> u32 {
        let (a, b) = halves(units);
        let (a, b) = (load_unaligned_m128i(a), load_unaligned_m128i(b));
        // Unsigned saturation keeps every unit below 0x100 as it is.
        store_unaligned_m128i(out, pack_i16_to_u8_m128i(a, b));
        // 0xff80 as a lane's bits: what is set outside ASCII.
        #[allow(clippy::cast_possible_wrap)]
        let high = set_splat_i16_m128i(0xff80_u16 as i16);
        let ascii = |v| cmp_eq_mask_i16_m128i(bitand_m128i(v, high), zeroed_m128i());
        // Each lane's all-ones or zero, packed to a byte each.
        !bits(pack_i16_to_i8_m128i(ascii(a), ascii(b))) & 0xffff
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn widen_bytes(chunk: &[u8; LANES], out: &mut [u8; 2 * LANES]) -> u32 {
        let v = load_unaligned_m128i(chunk);
        let (lo, hi) = out.split_at_mut(LANES);
        if let (Ok(lo), Ok(hi)) = (
            <&mut [u8; LANES]>::try_from(lo),
            <&mut [u8; LANES]>::try_from(hi),
        ) {
            store_unaligned_m128i(lo, unpack_low_i8_m128i(v, zeroed_m128i()));
            store_unaligned_m128i(hi, unpack_high_i8_m128i(v, zeroed_m128i()));
        }
        // A byte's high bit is set exactly outside ASCII.
        bits(v)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn base64_bytes(chunk: &[u8; LANES]) -> u32 {
        let v = load_unaligned_m128i(chunk);
        // `x - lo` (wrapping) is at most `hi - lo` exactly when `x` is in
        // `lo..=hi`; `| 0x20` folds capitals onto small letters (and no
        // other byte onto one).
        let within = |x, lo: u8, span: u8| {
            let d = sub_i8_m128i(x, splat(lo));
            cmp_eq_mask_i8_m128i(min_u8_m128i(d, splat(span)), d)
        };
        let letter = within(bitor_m128i(v, splat(0x20)), b'a', 25);
        let digit = within(v, b'0', 9);
        let signs = bitor_m128i(
            bitor_m128i(
                cmp_eq_mask_i8_m128i(v, splat(b'+')),
                cmp_eq_mask_i8_m128i(v, splat(b'-')),
            ),
            bitor_m128i(
                cmp_eq_mask_i8_m128i(v, splat(b'/')),
                cmp_eq_mask_i8_m128i(v, splat(b'_')),
            ),
        );
        bits(bitor_m128i(bitor_m128i(letter, digit), signs))
    }
}

/// The byte loops the vector forms replace: the masks of other targets,
/// and the tests' reference.
#[cfg(any(test, not(vector_bytes)))]
mod portable {
    use super::LANES;

    pub(super) fn string_stops(chunk: &[u8; LANES], a: u8, b: u8) -> u32 {
        let mut mask = 0;
        for (k, &c) in chunk.iter().enumerate() {
            mask |= u32::from(c == a || c == b || c == b'\\' || c < 0x20) << k;
        }
        mask
    }

    pub(super) fn bracket_stops(chunk: &[u8; LANES]) -> u32 {
        let mut mask = 0;
        for (k, &c) in chunk.iter().enumerate() {
            let stop = matches!(c, b'"' | b'\'' | b'/' | b'{' | b'}' | b'[' | b']');
            mask |= u32::from(stop) << k;
        }
        mask
    }

    pub(super) fn narrow_units(units: &[u8; 2 * LANES], out: &mut [u8; LANES]) -> u32 {
        let mut mask = 0;
        for (k, (o, u)) in out.iter_mut().zip(units.chunks_exact(2)).enumerate() {
            let (low, high) = (
                u.first().copied().unwrap_or(0),
                u.get(1).copied().unwrap_or(0),
            );
            *o = low;
            mask |= u32::from(high != 0 || low >= 0x80) << k;
        }
        mask
    }

    pub(super) fn widen_bytes(chunk: &[u8; LANES], out: &mut [u8; 2 * LANES]) -> u32 {
        let mut mask = 0;
        for (k, (o, &c)) in out.chunks_exact_mut(2).zip(chunk).enumerate() {
            o.copy_from_slice(&[c, 0]);
            mask |= u32::from(c >= 0x80) << k;
        }
        mask
    }

    pub(super) fn base64_bytes(chunk: &[u8; LANES]) -> u32 {
        let mut mask = 0;
        for (k, &c) in chunk.iter().enumerate() {
            let b64 = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'/' | b'_');
            mask |= u32::from(b64) << k;
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Bytes near every class's edges, and any byte.
    fn chunk_strategy() -> impl Strategy<Value = [u8; LANES]> {
        let byte = prop_oneof![
            prop::sample::select(
                b"\"'\\/{}[]`;:,ab \t\n\r\x0b\x0c\x00\x1f\x20\x21\x7f\x80\xff\xdb\xfb\xfd@AZz09+-_.*\xc1\xda\xe1\xfa".to_vec()
            ),
            any::<u8>(),
        ];
        prop::array::uniform16(byte)
    }

    proptest! {
        #[test]
        fn vector_masks_agree_with_the_portable_ones(
            chunk in chunk_strategy(),
            a in prop::sample::select(b"\"'".to_vec()),
            b in prop::sample::select(b"\"'".to_vec()),
        ) {
            prop_assert_eq!(string_stops(&chunk, a, b), portable::string_stops(&chunk, a, b));
            prop_assert_eq!(bracket_stops(&chunk), portable::bracket_stops(&chunk));
            prop_assert_eq!(quote_stops(&chunk), portable::string_stops(&chunk, b'"', b'"'));
            prop_assert_eq!(base64_bytes(&chunk), portable::base64_bytes(&chunk));
        }

        #[test]
        fn widened_bytes_agree_with_the_portable_ones(chunk in chunk_strategy()) {
            let (mut vector, mut portable) = ([0u8; 2 * LANES], [0u8; 2 * LANES]);
            let mask = widen_bytes(&chunk, &mut vector);
            prop_assert_eq!(mask, portable::widen_bytes(&chunk, &mut portable));
            prop_assert_eq!(vector, portable);
        }

        #[test]
        fn narrowed_units_agree_with_the_portable_ones(units in prop::array::uniform16(prop_oneof![
            4 => 0u16..0x80,
            1 => prop::sample::select(vec![0x7f_u16, 0x80, 0xff, 0x100, 0x17f, 0x7fff, 0x8000, 0xd800, 0xffff]),
            1 => any::<u16>(),
        ])) {
            let bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
            let bytes = <[u8; 2 * LANES]>::try_from(bytes).unwrap_or([0; 2 * LANES]);
            let (mut vector, mut portable) = ([0u8; LANES], [0u8; LANES]);
            let mask = narrow_units(&bytes, &mut vector);
            prop_assert_eq!(mask, portable::narrow_units(&bytes, &mut portable));
            for (k, u) in units.iter().enumerate() {
                prop_assert_eq!(mask & (1 << k) != 0, *u >= 0x80);
            }
            // Only the bytes of ASCII units are promised.
            for k in (0..LANES).filter(|k| mask & (1 << k) == 0) {
                prop_assert_eq!(vector[k], portable[k]);
            }
        }

        #[test]
        fn string_stops64_is_four_masks(chunks in prop::array::uniform4(chunk_strategy())) {
            let block: [u8; 4 * LANES] = chunks.concat().try_into().unwrap_or([0; 4 * LANES]);
            let mut want = 0u64;
            for (k, c) in block.iter().enumerate() {
                want |= u64::from(*c == b'"' || *c == b'\\' || *c < 0x20) << k;
            }
            prop_assert_eq!(string_stops64(&block), want);
        }
    }
}
