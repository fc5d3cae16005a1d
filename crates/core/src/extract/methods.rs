//! Which extraction methods a profile allows, and where the markers go.
//!
//! Note [Methods allowed]: a profile lists the methods it accepts, in the
//! order tried (`[extract] methods`). The chain's own order stays the one of
//! DESIGN.md: native output, then the text's JSON candidates by position
//! (`fenced`, `bare`, each strict, else `repaired`), then the markers. So a
//! list may leave methods out (a candidate won by a method left out is not
//! offered; the chain goes on to the next), and may move `markers` before the
//! JSON methods (for an agent whose markers are its protocol and whose JSON
//! is only an echo); `structured` comes first when listed, and `fenced`,
//! `bare`, `repaired` keep their order. `repaired` covers any candidate that
//! needed a repair, fenced or bare.

use crate::outcome::Method;

/// The methods allowed and the place of the markers (Note [Methods allowed]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Methods {
    structured: bool,
    fenced: bool,
    bare: bool,
    repaired: bool,
    markers: bool,
    markers_first: bool,
}

impl Default for Methods {
    /// Every method, in DESIGN.md's order.
    fn default() -> Self {
        Methods {
            structured: true,
            fenced: true,
            bare: true,
            repaired: true,
            markers: true,
            markers_first: false,
        }
    }
}

/// The names in DESIGN.md's order.
pub const METHOD_NAMES: &[&str] = &["structured", "fenced", "bare", "repaired", "markers"];

impl Methods {
    /// Whether a candidate won by `method` may be offered.
    pub fn allows(self, method: Method) -> bool {
        match method {
            Method::Structured => self.structured,
            Method::Fenced => self.fenced,
            Method::Bare => self.bare,
            Method::Repaired => self.repaired,
            Method::Markers => self.markers,
            Method::None => true,
        }
    }

    /// Whether the markers are tried before the text's JSON candidates.
    pub fn markers_first(self) -> bool {
        self.markers_first
    }

    /// Read a list of method names (Note [Methods allowed]).
    ///
    /// # Errors
    /// One line naming the entry that is unknown, repeated or out of order.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Methods, String> {
        let mut m = Methods {
            structured: false,
            fenced: false,
            bare: false,
            repaired: false,
            markers: false,
            markers_first: false,
        };
        let mut last_json: Option<usize> = None;
        let mut seen_json = false;
        for (i, name) in names.iter().enumerate() {
            let name = name.as_ref();
            let Some(rank) = METHOD_NAMES.iter().position(|n| *n == name) else {
                return Err(format!(
                    "`{name}` is not a method (one of {})",
                    METHOD_NAMES.join(", ")
                ));
            };
            if names[..i].iter().any(|n| n.as_ref() == name) {
                return Err(format!("`{name}` is listed twice"));
            }
            match name {
                "structured" => {
                    if i > 0 {
                        return Err("`structured` comes first when listed (native output is the agent's own answer)".into());
                    }
                    m.structured = true;
                }
                "markers" => {
                    m.markers = true;
                    m.markers_first = !seen_json;
                }
                _ => {
                    if m.markers && !m.markers_first {
                        return Err(format!(
                            "`{name}` follows `markers`: markers go before or after all of fenced, bare, repaired"
                        ));
                    }
                    if last_json.is_some_and(|r| rank < r) {
                        return Err(format!(
                            "`{name}` is out of order: fenced, bare, repaired are tried in that order"
                        ));
                    }
                    last_json = Some(rank);
                    seen_json = true;
                    match name {
                        "fenced" => m.fenced = true,
                        "bare" => m.bare = true,
                        _ => m.repaired = true,
                    }
                }
            }
        }
        if m.markers && !seen_json {
            m.markers_first = false;
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_allowed_methods_and_marker_place() {
        let all = Methods::from_names(METHOD_NAMES).unwrap();
        assert_eq!(all, Methods::default());
        let first = Methods::from_names(&["markers", "fenced", "bare"]).unwrap();
        assert!(first.markers_first() && !first.allows(Method::Repaired));
        assert!(!first.allows(Method::Structured) && first.allows(Method::Markers));
        let only = Methods::from_names(&["structured", "fenced"]).unwrap();
        assert!(!only.allows(Method::Markers) && !only.allows(Method::Bare));
        assert!(Methods::from_names::<&str>(&[]).is_ok());
        let bad: &[(&[&str], &str)] = &[
            (&["json"], "`json` is not a method"),
            (&["fenced", "fenced"], "listed twice"),
            (&["fenced", "structured"], "`structured` comes first"),
            (&["fenced", "markers", "bare"], "`bare` follows `markers`"),
            (&["bare", "fenced"], "`fenced` is out of order"),
        ];
        for (names, want) in bad {
            let err = Methods::from_names(names).unwrap_err();
            assert!(err.contains(want), "{names:?}: {err}");
        }
    }
}
