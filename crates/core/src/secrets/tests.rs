//! Unit tests of the secrets module (the planted and ordinary corpora are in
//! `crates/core/tests/secrets.rs`).

use std::sync::Arc;

use super::*;

/// The text around each planted secret (`context`) of the planted corpus,
/// for the tests that hold a cheap stand-in of a rule (a gate) to matching
/// wherever the rule does.
pub(super) fn planted_contexts() -> Vec<String> {
    include_str!("../../tests/fixtures/secrets/planted.jsonl")
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["context"].as_str().unwrap().to_owned()
        })
        .collect()
}

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

#[test]
fn a_bad_user_regex_is_a_one_line_error_naming_the_rule() {
    let user = RuleSet::from_toml(
        "[[rules]]\nid = \"broken\"\nregex = '''(sk_[a-z]{10'''\nkeywords = [\"sk_\"]\n",
    )
    .unwrap();
    let mut rules = RuleSet::builtin();
    rules.extend(user);
    let err = Detector::new(&rules).unwrap_err().to_string();
    assert!(err.starts_with("secret rule `broken`: bad regex:"), "{err}");
    assert!(!err.contains('\n'), "{err}");

    let err = RuleSet::from_toml("[[rules]]\nid = \"x\"\nregex = '''a(b)'''\nsecretGroup = 2\n")
        .map(|r| Detector::new(&r));
    let err = err.unwrap().unwrap_err().to_string();
    assert_eq!(
        err,
        "secret rule `x`: secretGroup 2 but the regex has 1 groups"
    );

    let err = RuleSet::from_toml("[[rules]]\nid = \"x\"\nregexp = 'a'\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("secret rules: ") && err.contains("regexp") && !err.contains('\n'),
        "{err}"
    );
    let err = RuleSet::from_toml("[[rules]]\nid = \"a b\"\nregex = 'a'\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("secret rule `a b`: id may hold only"),
        "{err}"
    );
    let err = RuleSet::from_toml(
        "[[rules]]\nid = \"a\"\nregex = 'a'\n[[rules]]\nid = \"a\"\nregex = 'b'\n",
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "secret rule `a`: duplicate id");
    let err = RuleSet::from_toml(
        "[[rules]]\nid = \"a\"\nregex = 'a'\n[[rules.allowlists]]\nregexTarget = \"file\"\nregexes = ['x']\n",
    );
    assert!(err.unwrap_err().to_string().contains("regexTarget `file`"));
}

#[test]
fn a_user_rule_replaces_the_builtin_rule_of_its_id_in_place() {
    let mut rules = RuleSet::builtin();
    let at = rules.ids().position(|id| id == "github-pat").unwrap();
    let user = RuleSet::from_toml(
        "disabled = [\"jwt\", \"no-such-rule\"]\n[allowlist]\nstopwords = [\"acmefixture\"]\n\
         [[rules]]\nid = \"github-pat\"\nregex = '''ghp_[0-9a-zA-Z]{10,}'''\nkeywords = [\"ghp_\"]\n",
    )
    .unwrap();
    let before = rules.rules.len();
    rules.extend(user);
    assert_eq!(rules.rules.len(), before - 1);
    assert_eq!(rules.ids().position(|id| id == "github-pat"), Some(at));
    assert!(!rules.ids().any(|id| id == "jwt"));
    let m = Masker::new(
        Arc::new(Detector::new(&rules).unwrap()),
        MaskKey::from_bytes([1; 32]),
    );
    assert_eq!(m.scan("x ghp_Ab3dE6gH9k y")[0].rule, "github-pat");
    // The user's global stopword allows what contains it.
    assert!(m.scan("x ghp_acmefixture y").is_empty());
    // A rule set's own `disabled` holds when it is used alone.
    let alone =
        RuleSet::from_toml("disabled = [\"a\"]\n[[rules]]\nid = \"a\"\nregex = 'zz+'\n").unwrap();
    assert_eq!(alone.ids().count(), 0);
    assert!(Detector::new(&alone).unwrap().find("zzzz").is_empty());
}

#[test]
fn mask_keys_read_and_write_hex_and_never_print() {
    let key = MaskKey::from_bytes(core::array::from_fn(|i| u8::try_from(i * 7).unwrap()));
    let hex = key.to_hex();
    assert_eq!(hex.len(), 64);
    assert_eq!(MaskKey::from_hex(&hex).unwrap(), key);
    assert_eq!(
        MaskKey::from_hex(&format!(" {}\n", hex.to_uppercase())).unwrap(),
        key
    );
    assert_eq!(format!("{key:?}"), "MaskKey(<redacted>)");
    let err = MaskKey::from_hex("abc").unwrap_err().to_string();
    assert_eq!(err, "mask key: expected 64 hex digits, got 3 characters");
    assert!(MaskKey::from_hex(&"g".repeat(64)).is_err());
    let m = Masker::builtin(key);
    assert!(!format!("{m:?}").contains(&hex));
}

#[test]
fn fingerprints_are_hmac_sha256_truncated() {
    // RFC 4231 test case 1: key 0x0b x 20 (zero-padded, as HMAC pads it), "Hi There".
    let mut key = [0u8; 32];
    key[..20].fill(0x0b);
    let m = Masker::builtin(MaskKey::from_bytes(key));
    assert_eq!(m.fingerprint("Hi There"), "b0344c61");
    // RFC 4231 test case 2: key "Jefe".
    let mut key = [0u8; 32];
    key[..4].copy_from_slice(b"Jefe");
    let m = Masker::builtin(MaskKey::from_bytes(key));
    assert_eq!(m.fingerprint("what do ya want for nothing?"), "5bdcc146");
    assert_ne!(
        masker().fingerprint("what do ya want for nothing?"),
        "5bdcc146"
    );
}

/// Note [A key read when first needed]: a lazy masker asks for its key at
/// the first secret, once, and fingerprints as the eager one does.
#[test]
fn a_lazy_key_is_read_at_the_first_secret_and_only_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reads);
    let detector = Arc::new(Detector::builtin_uncached());
    let lazy = Masker::lazy(Arc::clone(&detector), move || {
        counted.fetch_add(1, Ordering::SeqCst);
        MaskKey::from_bytes([7; 32])
    });
    let clean = "Deployed the service; all checks passed at 12:04.";
    assert_eq!(lazy.mask_str(clean).text, clean);
    assert_eq!(
        lazy.mask_json_text(r#"{"api_key_source": "env", "n": 1}"#)
            .found
            .len(),
        0
    );
    assert_eq!(lazy.safe_id("session-1234"), "session-1234");
    assert_eq!(
        reads.load(Ordering::SeqCst),
        0,
        "nothing found, no key read"
    );
    let token = "token ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7 here";
    let eager = Masker::new(detector, MaskKey::from_bytes([7; 32]));
    let clone = lazy.clone();
    assert_eq!(lazy.mask_str(token).text, eager.mask_str(token).text);
    assert_eq!(clone.mask_str(token).text, masker().mask_str(token).text);
    assert_eq!(lazy.key(), eager.key());
    assert_eq!(
        reads.load(Ordering::SeqCst),
        1,
        "read once, clones share it"
    );
}

#[test]
fn masks_land_on_char_boundaries_in_non_ascii_text() {
    let m = masker();
    let token = "ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";
    let text =
        format!("clé → «{token}» ✓ 日本語のテキスト\nmot de passe: password=Ünïcödé-Päss9€ fin");
    let masked = m.mask_str(&text);
    for f in &masked.found {
        assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
    }
    assert!(
        masked.text.starts_with("clé → «[REDACTED:github-pat:"),
        "{}",
        masked.text
    );
    assert!(masked.text.contains("» ✓ 日本語のテキスト\n"));
    assert!(!masked.text.contains(token));
    // A password of non-ASCII letters is found and cut on its char boundaries.
    assert!(
        masked.found.iter().any(|f| f.rule == "generic-password"),
        "{masked:?}"
    );
    assert!(masked.text.ends_with("] fin"), "{}", masked.text);
}

#[test]
fn nothing_found_borrows_the_text() {
    let m = masker();
    let text = "cargo test -p agentshape-core secrets -- token budget 4096, key order";
    assert!(matches!(
        m.mask_str(text).text,
        std::borrow::Cow::Borrowed(_)
    ));
    let json = r#"{"type":"assistant","usage":{"input_tokens":12,"output_tokens":3}}"#;
    assert!(matches!(
        m.mask_json_text(json).text,
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn secrets_in_object_keys_and_beside_their_names_are_masked() {
    let m = masker();
    let token = "ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";
    let mut v = serde_json::json!({"a": 1, token: "value", "db": {"password": "Tr0ub4dor&3x"}, "list": ["x", token]});
    let found = m.mask_value(&mut v);
    assert_eq!(found.len(), 3, "{found:?}");
    let text = v.to_string();
    assert!(
        !text.contains(token) && !text.contains("Tr0ub4dor"),
        "{text}"
    );
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4);
    assert!(
        keys[1].starts_with("[REDACTED:github-pat:"),
        "key keeps its place: {keys:?}"
    );
    // Text that is not JSON is masked as text.
    let not_json = format!("not json {token}");
    let masked = m.mask_json_text(&not_json);
    assert!(masked.text.starts_with("not json [REDACTED:github-pat:"));
}

/// Note \[Plain text through the JSON door\] in `hand_gate.rs`: text
/// handed to `mask_json_text` that is not JSON is masked exactly as
/// `mask_str` masks it, and `bytes_hold_nothing` never says nothing of a
/// text either finds something in. The generic rule read the text as JSON
/// and stopped at a quote that only JSON ends a string with (the shapes
/// below leaked the value whole).
#[test]
fn text_that_is_not_json_is_masked_as_text_whatever_its_quotes() {
    let m = masker();
    let value = "Zx9kQ2mP7vL4nR8tW1yB";
    for shape in [
        "token\" = {v}",
        "my token\" = {v} here",
        "api_key\"=\"{v}\"",
        "auth\", {v}",
        "secret' = {v}",
        "password\"\t|| {v};",
        "the access\" => \"{v}\" ok",
        "key\"?= {v}",
        "[\"token\",\"{v}\"",
    ] {
        let text = shape.replace("{v}", value);
        let plain = m.mask_str(&text).text.into_owned();
        assert!(!plain.contains(value), "{text}: the rule itself finds it");
        assert_eq!(m.mask_json_text(&text).text, plain, "{text}");
        assert!(!m.bytes_hold_nothing(text.as_bytes()), "{text}");
    }
    // As JSON, a key's quote is read as JSON's: a string beside its key,
    // and a string after a comma only when it is a value of ten bytes.
    let json = format!("{{\"token\": \"{value}\"}}");
    assert!(!m.mask_json_text(&json).text.contains(value));
    for clean in [
        r#"{"repairs":["unquoted_key","single_quotes"],"n":1}"#,
        r#"["the token","next"]"#,
    ] {
        assert_eq!(m.mask_json_text(clean).text, clean);
        assert!(m.bytes_hold_nothing(clean.as_bytes()), "{clean}");
    }
}

#[test]
fn overlapping_rules_prefer_the_specific_one() {
    let m = masker();
    // The generic rule also sees `api_key = "<...>"`; the Anthropic rule wins.
    let key = format!(
        "sk-ant-api03-{}AA",
        "aB3-dE6_gH9".repeat(9).chars().take(93).collect::<String>()
    );
    let found = m.scan(&format!("api_key = \"{key}\"\n"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].rule, "anthropic-api-key");
}

mod props {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::masker;

    /// Strings that hold secrets, near-secrets and ordinary text.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7".to_owned()),
            Just("AKIAQ7XK2M4PZ6RT3WNB".to_owned()),
            Just("password=Tr0ub4dor&3x".to_owned()),
            Just("postgres://app:s3cr3tPw9@db:5432/x".to_owned()),
            Just("token: \"9f8e7d6c5b4a39281706f5e4d3c2b1a0\"".to_owned()),
            Just("[REDACTED:jwt:0123abcd]".to_owned()),
            Just("\n".to_owned()),
            Just(" = ".to_owned()),
            "[a-zA-Z0-9 _:=\"'/@.-]{0,24}",
            "\\PC{0,8}",
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(piece(), 0..6).prop_map(|v| v.concat())
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e9f64..1e9).prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(text(), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The value with every string replaced: what masking must keep.
    fn shape(v: &Value) -> Value {
        match v {
            Value::String(_) => Value::String(String::new()),
            Value::Array(a) => Value::Array(a.iter().map(shape).collect()),
            Value::Object(m) => Value::Array(m.values().map(shape).collect()),
            other => other.clone(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn mask_value_keeps_shape_and_validity(v in json()) {
            let m = masker();
            let mut masked = v.clone();
            let found = m.mask_value(&mut masked);
            prop_assert_eq!(shape(&masked), shape(&v));
            let text = serde_json::to_string(&masked).unwrap();
            let back: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(&back, &masked);
            let raw = serde_json::to_string(&v).unwrap();
            let via_text = m.mask_json_text(&raw);
            let parsed: Value = serde_json::from_str(&via_text.text).unwrap();
            prop_assert_eq!(shape(&parsed), shape(&v));
            prop_assert_eq!(&parsed, &masked);
            prop_assert_eq!(via_text.found.len(), found.len());
            // Idempotent on values too.
            let mut again = masked.clone();
            prop_assert!(m.mask_value(&mut again).is_empty());
            prop_assert_eq!(again, masked);
        }

        #[test]
        fn masking_is_idempotent_and_on_char_boundaries(s in text()) {
            let m = masker();
            let once = m.mask_str(&s);
            for f in &once.found {
                prop_assert!(s.is_char_boundary(f.start) && s.is_char_boundary(f.end) && f.start < f.end);
            }
            for w in once.found.windows(2) {
                prop_assert!(w[0].end <= w[1].start);
            }
            let twice = m.mask_str(&once.text);
            prop_assert_eq!(&twice.text, &once.text);
            prop_assert!(twice.found.is_empty());
        }
    }
}

/// Note [Rules parsed at build time]: the built-in set the build script
/// generated is exactly the parsed file.
#[test]
fn builtin_rules_generated_at_build_time_equal_the_parsed_file() {
    let parsed = RuleSet::from_toml(super::rules::BUILTIN).unwrap();
    assert!(parsed.rules.len() > 200);
    assert_eq!(RuleSet::builtin(), parsed);
}

#[test]
fn url_encoded_credentials_are_masked_over_the_encoded_bytes() {
    let m = masker();
    let text = "redirect to /sso?next=postgres%3A%2F%2Fuser%3Ap4ss%21w0rd%40db.internal%2Fapp done";
    let masked = m.mask_str(text);
    assert_eq!(masked.found.len(), 1, "{masked:?}");
    assert_eq!(masked.found[0].rule, "url-password");
    assert_eq!(
        &text[masked.found[0].start..masked.found[0].end],
        "p4ss%21w0rd"
    );
    assert!(
        masked
            .text
            .contains("postgres%3A%2F%2Fuser%3A[REDACTED:url-password:"),
        "{}",
        masked.text
    );
    assert!(masked.text.ends_with("]%40db.internal%2Fapp done"));
    assert_eq!(m.mask_str(&masked.text).text, masked.text);
    // Inside JSON without escapes (the fast path) too.
    let json = format!(r#"{{"url":"{text}"}}"#);
    assert!(!m.mask_json_text(&json).text.contains("p4ss"));
    // An encoded URL without a password is left alone.
    assert!(
        m.scan("see https%3A%2F%2Fexample.com%2Fdocs%3Fq%3D1")
            .is_empty()
    );
}

#[test]
fn base64_that_decodes_to_a_secret_is_masked_whole_and_ordinary_base64_is_not() {
    let m = masker();
    // base64 of "DATABASE_URL=postgres://app:Sup3rS3cr3tPw@db:5432/app\n".
    let blob = "REFUQUJBU0VfVVJMPXBvc3RncmVzOi8vYXBwOlN1cDNyUzNjcjN0UHdAZGI6NTQzMi9hcHAK";
    let text = format!("  .env: {blob}\nkind: Secret\n");
    let masked = m.mask_str(&text);
    assert_eq!(masked.found.len(), 1, "{masked:?}");
    assert_eq!(masked.found[0].rule, "url-password");
    assert_eq!(&text[masked.found[0].start..masked.found[0].end], blob);
    assert_eq!(m.mask_str(&masked.text).text, masked.text);
    // base64 of ordinary text, an image, a hash, a key id: no masks.
    let ordinary = [
        // "The quick brown fox jumps over the lazy dog. Nothing secret here."
        "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZy4gTm90aGluZyBzZWNyZXQgaGVyZS4=",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "\"integrity\": \"sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXGOm3ueFtTEoXD0qGjvW5Ncg==\"",
        "digest: sha256:Ya9GJX4iT5W1VxnhYmbzbaAFFxNCGxEL3vTh4jEOeyI=",
        // base64 of "password: ${DB_PASSWORD}" (a placeholder, allowlisted).
        "cGFzc3dvcmQ6ICR7REJfUEFTU1dPUkR9",
    ];
    for text in ordinary {
        assert!(m.scan(text).is_empty(), "{text}: {:?}", m.scan(text));
    }
}

#[test]
fn a_jwt_broken_over_lines_is_masked_on_both_lines() {
    let m = masker();
    let (h, p) = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJzdWIiOiJ1c2VyLTQyIiwicm9sZSI6ImFkbWluIiwiaWF0IjoxNzY0MDAwMDAwfQ",
    );
    let sig = "Qm9rZW5TaWduYXR1cmVfX19hYmNkZWZnaGlqa2xtbm9w";
    for text in [
        // header.payload, then the signature on the next line.
        format!("token:\n{h}.{p}.\n{sig}\nok\n"),
        // A line break inside the payload (a terminal's wrap).
        format!("$ cat session\n{h}.{}\n{}.{sig}\n$ \n", &p[..20], &p[20..]),
        // The same in JSON-escaped text, indented.
        format!(
            r#"{{"log": "jwt {h}.{}\n    {}.{sig}"}}"#,
            &p[..30],
            &p[30..]
        ),
    ] {
        let masked = m.mask_str(&text);
        assert!(masked.found.iter().all(|f| f.rule == "jwt"), "{masked:?}");
        for part in [h, &p[..20], &p[40..], sig] {
            assert!(!masked.text.contains(part), "{part} in {}", masked.text);
        }
        // The line breaks stay.
        assert_eq!(masked.text.lines().count(), text.lines().count());
        assert_eq!(m.mask_str(&masked.text).text, masked.text);
    }
    // A complete JWT does not swallow the next line.
    let text = format!("{h}.{p}.{sig}\nNextLineWord\n");
    let masked = m.mask_str(&text);
    assert!(
        masked.text.ends_with("]\nNextLineWord\n"),
        "{}",
        masked.text
    );
}

/// The built-in detector compiles allowlist regexes late, reads stopwords
/// without an automaton at first, and tries the allowlists decided without
/// compiling first (Note [Stopwords without an automaton]): it must find
/// exactly what the detector compiled whole at once finds, before and
/// after its stopwords switch to the automaton.
#[test]
fn allowlists_read_late_and_cheap_first_allow_what_compiled_ones_allow() {
    let eager = Detector::new(&RuleSet::builtin()).unwrap();
    let lazy = Detector::builtin_uncached();
    let mut texts = planted_contexts();
    // Candidates the allowlists let through or stop: template variables,
    // stopwords, identifiers, and the generic rule's match and line lists.
    for value in [
        "${API_KEY}",
        "{{ secrets.token }}",
        "example_token_value_here",
        "changeme_placeholder_value",
        "abcdefghijklmnop",
        "Xk2p9Lq7Vw3Rt8Zy",
        "$HOME_DIRECTORY",
        "%PASSWORD_VAR%",
        "/usr/local/share/secret",
        "aaaaaaaaaaaaaaaaaaaa",
        "true_or_false_value",
    ] {
        for name in [
            "api_key",
            "token",
            "password",
            "secret",
            "key_alias",
            "public_key",
        ] {
            texts.push(format!("{name} = \"{value}\""));
            texts.push(format!("{{\"{name}\": \"{value}\"}}"));
            texts.push(format!("export {}={value}", name.to_uppercase()));
        }
    }
    texts.push("import { token } from \"./tokens\"\napi_token = 'zq81JHd9s0Lk2mN4'".to_owned());
    texts.push("RUN --mount=type=secret,id=api_key api_key=Zp0dK3mQ8xW2vN7r".to_owned());
    // Twice over one detector: the second pass runs after the stopwords'
    // automaton has taken over (more than 256 checks).
    for pass in 0..2 {
        for t in &texts {
            assert_eq!(lazy.find(t), eager.find(t), "pass {pass}: {t:?}");
        }
    }
}
