//! Unit tests of the secrets module (the planted and ordinary corpora are in
//! `crates/core/tests/secrets.rs`).

use std::sync::Arc;

use super::*;

fn masker() -> Masker {
    Masker::builtin(MaskKey::from_bytes([7; 32]))
}

#[test]
fn every_builtin_rule_compiles() {
    let rules = RuleSet::builtin();
    assert!(rules.rules.len() > 200, "{}", rules.rules.len());
    for rule in &rules.rules {
        let one = RuleSet {
            rules: vec![rule.clone()],
            allowlists: Vec::new(),
            disabled: Vec::new(),
        };
        if let Err(e) = Detector::new(&one) {
            panic!("{e}");
        }
    }
    let d = Detector::new(&rules).unwrap();
    assert_eq!(d.rule_ids().count(), rules.rules.len());
}
