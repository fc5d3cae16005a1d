//! [`super`]'s masks with WebAssembly's SIMD128 (Note \[WebAssembly SIMD\]
//! in `.cargo/config.toml`): the same compares as the SSE2 forms, and
//! `i8x16.bitmask` for `pmovmskb`. The intrinsics are safe functions here
//! because the crate is compiled with `simd128` enabled, so core stays
//! `forbid(unsafe_code)`. The chunk is loaded by value (`u8x16` of its
//! bytes), which the compiler makes one `v128.load`. The node tests of the
//! npm package run these (its repair corpus, extraction table and schema
//! suite agree with the CLI's), as native tests run the SSE2 ones.

use core::arch::wasm32::{
    i8x16_bitmask, i8x16_eq, i8x16_narrow_i16x8, i16x8_eq, u8x16, u8x16_min, u8x16_narrow_i16x8,
    u8x16_splat, u8x16_sub, u16x8_extend_high_u8x16, u16x8_extend_low_u8x16, u16x8_splat,
    u64x2_extract_lane, v128, v128_and, v128_or, v128_xor,
};

use super::LANES;

#[allow(clippy::inline_always)]
#[inline(always)]
fn load(c: &[u8; LANES]) -> v128 {
    let [
        a0,
        a1,
        a2,
        a3,
        a4,
        a5,
        a6,
        a7,
        a8,
        a9,
        a10,
        a11,
        a12,
        a13,
        a14,
        a15,
    ] = *c;
    u8x16(
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15,
    )
}

#[allow(clippy::inline_always)]
#[inline(always)]
fn bits(v: v128) -> u32 {
    u32::from(i8x16_bitmask(v))
}

#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn string_stops(chunk: &[u8; LANES], a: u8, b: u8) -> u32 {
    let v = load(chunk);
    // `min(v, 0x1f) == v` exactly where `v` is below 0x20 (unsigned).
    let control = i8x16_eq(u8x16_min(v, u8x16_splat(0x1f)), v);
    let quote = v128_or(i8x16_eq(v, u8x16_splat(a)), i8x16_eq(v, u8x16_splat(b)));
    let backslash = i8x16_eq(v, u8x16_splat(b'\\'));
    bits(v128_or(v128_or(control, quote), backslash))
}

#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn quote_stops(chunk: &[u8; LANES]) -> u32 {
    let v = load(chunk);
    // Note [Quote or control in one test].
    let x = v128_xor(v, u8x16_splat(0x02));
    let quote_or_control = i8x16_eq(u8x16_min(x, u8x16_splat(0x20)), x);
    let backslash = i8x16_eq(v, u8x16_splat(b'\\'));
    bits(v128_or(quote_or_control, backslash))
}

#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn bracket_stops(chunk: &[u8; LANES]) -> u32 {
    let v = load(chunk);
    // `[` and `]` are `{` and `}` less 0x20: one `or` folds them.
    let folded = v128_or(v, u8x16_splat(0x20));
    let brackets = v128_or(
        i8x16_eq(folded, u8x16_splat(b'{')),
        i8x16_eq(folded, u8x16_splat(b'}')),
    );
    let quotes = v128_or(
        i8x16_eq(v, u8x16_splat(b'"')),
        i8x16_eq(v, u8x16_splat(b'\'')),
    );
    let slash = i8x16_eq(v, u8x16_splat(b'/'));
    bits(v128_or(brackets, v128_or(quotes, slash)))
}

#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn base64_bytes(chunk: &[u8; LANES]) -> u32 {
    let v = load(chunk);
    // As the SSE2 form: `x - lo` (wrapping) at most `hi - lo`.
    let within = |x, lo: u8, span: u8| {
        let d = u8x16_sub(x, u8x16_splat(lo));
        i8x16_eq(u8x16_min(d, u8x16_splat(span)), d)
    };
    let letter = within(v128_or(v, u8x16_splat(0x20)), b'a', 25);
    let digit = within(v, b'0', 9);
    let signs = v128_or(
        v128_or(
            i8x16_eq(v, u8x16_splat(b'+')),
            i8x16_eq(v, u8x16_splat(b'-')),
        ),
        v128_or(
            i8x16_eq(v, u8x16_splat(b'/')),
            i8x16_eq(v, u8x16_splat(b'_')),
        ),
    );
    bits(v128_or(v128_or(letter, digit), signs))
}

#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn narrow_units(units: &[u8; 2 * LANES], out: &mut [u8; LANES]) -> u32 {
    let (a, b) = super::halves(units);
    let (a, b) = (load(a), load(b));
    // Unsigned saturation keeps every unit below 0x100 as it is. The bytes
    // are stored as two words (storing the vector takes a pointer, which
    // is `unsafe`); the module's build makes them one `v128.store`.
    let bytes = u8x16_narrow_i16x8(a, b);
    let (lo, hi) = out.split_at_mut(LANES / 2);
    lo.copy_from_slice(&u64x2_extract_lane::<0>(bytes).to_le_bytes());
    hi.copy_from_slice(&u64x2_extract_lane::<1>(bytes).to_le_bytes());
    let high = u16x8_splat(0xff80);
    let ascii = |v| i16x8_eq(v128_and(v, high), u16x8_splat(0));
    // Each lane's all-ones or zero, narrowed to a byte each.
    !bits(i8x16_narrow_i16x8(ascii(a), ascii(b))) & 0xffff
}

#[allow(clippy::inline_always)]
#[inline(always)]
pub(super) fn widen_bytes(chunk: &[u8; LANES], out: &mut [u8; 2 * LANES]) -> u32 {
    let v = load(chunk);
    // Stored as words, as in `narrow_units`.
    for (k, wide) in [u16x8_extend_low_u8x16(v), u16x8_extend_high_u8x16(v)]
        .into_iter()
        .enumerate()
    {
        for (j, lane) in [u64x2_extract_lane::<0>(wide), u64x2_extract_lane::<1>(wide)]
            .into_iter()
            .enumerate()
        {
            if let Some(o) = out.get_mut(LANES * k + 8 * j..LANES * k + 8 * (j + 1)) {
                o.copy_from_slice(&lane.to_le_bytes());
            }
        }
    }
    // A byte's high bit is set exactly outside ASCII.
    bits(v)
}
