//! Ids through the door (issue 40 §1).
//!
//! Note \[Safe ids\]: an id is a key, not text: a session id is joined on,
//! linked to and filtered by, so a secret inside it cannot be masked as
//! `[REDACTED:…]` in one place and kept in another. An id that holds a
//! secret is replaced whole by `masked-<16 hex>`, a keyed hash of the id
//! (the store's mask key), everywhere it is written or sent: the same id
//! always maps to the same replacement under one key, so a sub-agent still
//! names its parent, a feed row its session, a mark its file, and a guess
//! of the id cannot be confirmed without the key. An id with no secret is
//! kept as it is (the agents' own UUIDs stay readable).

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use super::Masker;

/// What every replaced id starts with.
pub const SAFE_ID_PREFIX: &str = "masked-";

impl Masker {
    /// `id`, or its keyed replacement when it holds a secret (Note \[Safe
    /// ids\]).
    pub fn safe_id<'a>(&self, id: &'a str) -> Cow<'a, str> {
        if id.starts_with(SAFE_ID_PREFIX) || self.scan(id).is_empty() {
            return Cow::Borrowed(id);
        }
        let mut h = Sha256::new();
        h.update(self.key().as_bytes());
        h.update(b"\0agentshape session id\0");
        h.update(id.as_bytes());
        let digest = h.finalize();
        let mut out = String::with_capacity(SAFE_ID_PREFIX.len() + 16);
        out.push_str(SAFE_ID_PREFIX);
        for b in &digest[..8] {
            use std::fmt::Write as _;
            let _ = write!(out, "{b:02x}");
        }
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::MaskKey;

    #[test]
    fn an_id_with_a_secret_is_replaced_whole_and_the_same_way_every_time() {
        let m = Masker::builtin(MaskKey::from_bytes([3; 32]));
        let other = Masker::builtin(MaskKey::from_bytes([4; 32]));
        let id = "sess-ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";
        let safe = m.safe_id(id);
        assert!(safe.starts_with(SAFE_ID_PREFIX), "{safe}");
        assert_eq!(safe.len(), SAFE_ID_PREFIX.len() + 16);
        assert!(!safe.contains("ghp_"));
        assert_eq!(m.safe_id(id), safe);
        // Another key, another replacement: a guess needs the key.
        assert_ne!(other.safe_id(id), safe);
        // Once replaced, it stays.
        assert_eq!(m.safe_id(&safe), safe);
        // Clean ids are kept.
        for clean in [
            "0199aa00-1111-7222-8333-444455556666",
            "agent-a1b2c3",
            "native-0011",
        ] {
            assert_eq!(m.safe_id(clean), clean);
        }
    }
}
