//! Sets of bytes, one bit each: what a keyword's shape holds at each place
//! (Note \[Keywords as a match holds them\] in `keywords.rs`).
//!
//! A module of the library, of its `shape.rs` and `buckets.rs`, and of
//! the build script (which reads the shapes off the built-in patterns and
//! places their keywords), so it uses nothing outside `core`.

/// A set of bytes, one bit each.
pub type ByteSet = [u64; 4];

/// The set holding `b` alone.
pub fn one(b: u8) -> ByteSet {
    let mut s = [0; 4];
    s[usize::from(b >> 6)] |= 1 << (b & 63);
    s
}

/// Whether `set` holds `b`.
pub fn holds(set: &ByteSet, b: u8) -> bool {
    set[usize::from(b >> 6)] >> (b & 63) & 1 != 0
}

/// The bytes `set` holds, in order, read a set bit at a time (testing all
/// 256 was a fifth of building the built-in detector, criterion's
/// `first_use`).
pub fn bytes(set: &ByteSet) -> impl Iterator<Item = u8> + '_ {
    set.iter().enumerate().flat_map(|(w, &word)| {
        let mut bits = word;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                // Below 256: the cast keeps every bit.
                #[allow(clippy::cast_possible_truncation)]
                let b = (w * 64 + bits.trailing_zeros() as usize) as u8;
                bits &= bits - 1;
                b
            })
        })
    })
}

/// The bytes of `a` and of `b`.
pub fn union(a: &ByteSet, b: &ByteSet) -> ByteSet {
    [a[0] | b[0], a[1] | b[1], a[2] | b[2], a[3] | b[3]]
}

/// Two shapes joined place by place (what either allows), when they have
/// as many places; `None` otherwise.
fn join(a: &[ByteSet], b: &[ByteSet]) -> Option<Vec<ByteSet>> {
    (a.len() == b.len()).then(|| a.iter().zip(b).map(|(x, y)| union(x, y)).collect())
}

/// Shapes joined place by place (what any allows): `None` when there are
/// none, when one is unknown (`None`; the rest are not read) or when two
/// have different numbers of places. What a match of several branches, or
/// of several rules with one keyword, holds.
pub fn join_all<S: AsRef<[ByteSet]>>(
    shapes: impl IntoIterator<Item = Option<S>>,
) -> Option<Vec<ByteSet>> {
    let mut joined: Option<Vec<ByteSet>> = None;
    for shape in shapes {
        let shape = shape?;
        joined = Some(match joined {
            None => shape.as_ref().to_vec(),
            Some(j) => join(&j, shape.as_ref())?,
        });
    }
    joined
}
