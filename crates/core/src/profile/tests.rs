use serde_json::json;

use super::*;
use crate::extract::{ExtractOptions, extract_text};
use crate::validate::Validator;

/// Read a profile text whose schema paths name nothing on disk.
fn read(text: &str) -> Result<Profile> {
    Profile::from_toml(text, "p.toml", "p", &mut |path| match path {
        "answer.json" => Ok(r#"{"type": "object", "required": ["ok"]}"#.to_owned()),
        "broken.json" => Ok("{".to_owned()),
        _ => Err("No such file or directory".to_owned()),
    })
}

#[test]
fn every_builtin_profile_loads_with_an_object_schema() {
    for name in BUILTIN {
        let p = Profile::builtin(name).unwrap();
        assert_eq!(p.schema["type"], "object", "{name}");
        assert_eq!(p.name, *name);
        assert!(
            Profile::builtin_text(name)
                .unwrap()
                .contains(&format!("name = \"{name}\""))
        );
    }
}

#[test]
fn unknown_profile_names_the_known_ones() {
    let err = Profile::builtin("nope").unwrap_err().to_string();
    assert_eq!(
        err,
        "unknown profile `nope` (known: claude-ops, claude-loop, code-review)"
    );
}

/// The built-ins read from their TOML text behave as the hand-named
/// grammars and the schema files did: same markers, same extractions.
#[test]
fn builtins_from_their_files_behave_as_before() {
    let cases: &[(&str, MarkerGrammar<'static>, &str, &[&str])] = &[
        (
            "claude-ops",
            MarkerGrammar::ClaudeOps,
            include_str!("../../../../schemas/agent-response.json"),
            &[
                "Checked.\n[EVENT:critical:jellyfin] HTTP 502\n[MEMORY:timing:jellyfin] 60s",
                "```json\n{\"summary\": \"x\"}\n```\n[EVENT:info] fine",
                "no markers at all",
            ],
        ),
        (
            "claude-loop",
            MarkerGrammar::ClaudeLoop,
            include_str!("../../../../schemas/loop-action.json"),
            &[
                "done\n<loop>COMPLETE</loop>",
                "WORKER_FAILURE: US-7: tests failed",
                "{\"action\": \"continue\"}",
            ],
        ),
    ];
    for (name, grammar, schema_text, texts) in cases {
        let p = Profile::builtin(name).unwrap();
        assert_eq!(p.markers.as_ref(), Some(grammar.spec()), "{name}");
        let schema: Value = serde_json::from_str(schema_text).unwrap();
        assert_eq!(p.schema, schema, "{name}");
        let v = Validator::new(&schema).unwrap();
        let pv = Validator::new(&p.schema).unwrap();
        for text in *texts {
            let before = extract_text(
                text,
                &ExtractOptions {
                    validator: Some(&v),
                    markers: Some(*grammar),
                    ..ExtractOptions::default()
                },
            );
            let after = extract_text(
                text,
                &ExtractOptions {
                    validator: Some(&pv),
                    markers: p.grammar(),
                    methods: p.methods,
                    coerce: p.coerce,
                },
            );
            assert_eq!(
                serde_json::to_value(&before).unwrap(),
                serde_json::to_value(&after).unwrap(),
                "{name}: {text:?}"
            );
        }
    }
    let cr = Profile::builtin("code-review").unwrap();
    assert!(cr.markers.is_none());
    assert_eq!(cr.contradictions, Some(ContradictionOptions::default()));
    assert!(!cr.methods.allows(crate::Method::Markers));
}

#[test]
fn schema_by_path_inline_json_or_table() {
    let by_path = read("schema = \"answer.json\"").unwrap();
    assert_eq!(
        by_path.schema,
        json!({"type": "object", "required": ["ok"]})
    );
    assert_eq!(by_path.name, "p");
    let inline = read("schema = '{\"type\": \"object\", \"required\": [\"ok\"]}'").unwrap();
    assert_eq!(inline.schema, by_path.schema);
    let table = read("name = \"t\"\n[schema]\ntype = \"object\"\nrequired = [\"ok\"]\n").unwrap();
    assert_eq!(table.schema, by_path.schema);
    assert_eq!(table.name, "t");
}

#[test]
fn extra_invariants_join_the_schema_rules() {
    let p = read(
        "schema = \"answer.json\"\n[[invariants]]\nrule = \"self.ok == true\"\nmessage = \"must be ok\"\n",
    )
    .unwrap();
    assert_eq!(
        p.schema["x-invariants"],
        json!([{"rule": "self.ok == true", "message": "must be ok"}])
    );
    let v = Validator::new(&p.schema).unwrap();
    let e = extract_text(
        "{\"ok\": false}",
        &ExtractOptions {
            validator: Some(&v),
            ..ExtractOptions::default()
        },
    );
    assert!(!e.valid);
    assert_eq!(e.errors[0].message, "must be ok");
    let cr = Profile::builtin("code-review").unwrap();
    let n = cr.schema["x-invariants"].as_array().unwrap().len();
    let text = format!(
        "{}\n[[invariants]]\nrule = \"self.findings.size() <= 200\"\n",
        Profile::builtin_text("code-review").unwrap()
    );
    let more = Profile::from_toml(&text, "cr.toml", "cr", &mut |_| {
        Ok(Profile::builtin_schema("code-review").unwrap().to_owned())
    })
    .unwrap();
    assert_eq!(more.schema["x-invariants"].as_array().unwrap().len(), n + 1);
}

#[test]
fn bad_profile_files_name_the_key() {
    let rows: &[(&str, &str)] = &[
        ("", "`schema`: missing"),
        (
            "schema = \"answer.json\"\nshema = 1\n",
            "`shema`: unknown field `shema`",
        ),
        (
            "schema = \"answer.json\"\ncoerce = \"yes\"\n",
            "`coerce`: invalid type",
        ),
        (
            "schema = \"nope.json\"\n",
            "`schema`: `nope.json`: No such file",
        ),
        (
            "schema = \"broken.json\"\n",
            "`schema`: `broken.json` is not JSON",
        ),
        ("schema = '{\"type\": '\n", "`schema`: inline JSON"),
        ("schema = 3\n", "`schema`: expected a path or a table"),
        (
            "schema = \"answer.json\"\nhandoff = [\"../x\"]\n",
            "`handoff[0]`",
        ),
        (
            "schema = \"answer.json\"\n[extract]\nmethods = [\"json\"]\n",
            "`extract.methods`: `json` is not a method",
        ),
        (
            "schema = \"answer.json\"\n[extract]\nmetods = []\n",
            "`extract.metods`: unknown field",
        ),
        (
            "schema = \"answer.json\"\n[contradictions]\nkey = []\n",
            "`contradictions.key`",
        ),
        (
            "schema = \"answer.json\"\n[contradictions]\nitems = \"findings\"\nkey = [\"f\"]\n",
            "`contradictions.items`",
        ),
        (
            "schema = \"answer.json\"\n[markers]\nmode = \"last\"\n[[markers.rule]]\nprefix = \"X\"\nfields = [\"a b\"]\n",
            "`markers.rule[0].fields[0]`",
        ),
        (
            "schema = \"answer.json\"\n[markers]\nmode = \"sometimes\"\n",
            "`markers.mode`: unknown variant `sometimes`",
        ),
        (
            "schema = \"answer.json\"\n[[markers.rule]]\nprefix = \"X\"\ninto = \"a\"\ncolse = \"]\"\n",
            "`markers.rule[0].colse`: unknown field",
        ),
        (
            "schema = \"answer.json\"\nname = \"\"\n",
            "`name`: must not be empty",
        ),
        (
            "schema = \"answer.json\"\npass_env = [\"ANTHROPIC_API_KEY\"]\n",
            "`pass_env`: `ANTHROPIC_API_KEY`: only agentshape's own variables",
        ),
        (
            "schema = \"answer.json\"\npass_env = [\"AGENTSHAPE_\"]\n",
            "`pass_env`: `AGENTSHAPE_`",
        ),
        (
            "schema = \"answer.json\"\npass_env = \"AGENTSHAPE_STORE\"\n",
            "`pass_env`: invalid type",
        ),
    ];
    for (text, want) in rows {
        let err = read(text).unwrap_err().to_string();
        assert!(err.starts_with("profile `p.toml`: "), "{text:?}: {err}");
        assert!(err.contains(want), "{text:?}: {err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
}

/// Note [Methods allowed]: a method left out is not offered (the chain goes
/// on), and `markers` listed first is tried before the JSON candidates.
#[test]
fn methods_allowed_and_markers_first_drive_the_chain() {
    let text = "schema = '{\"type\": \"object\"}'\n[extract]\nmethods = [\"markers\", \"fenced\"]\n\
                [markers]\nmode = \"last\"\n[[markers.rule]]\nprefix = \"STATUS:\"\nat = \"line-start\"\nfields = [\"state\"]\n";
    let p = read(text).unwrap();
    let v = Validator::new(&p.schema).unwrap();
    let opts = ExtractOptions {
        validator: Some(&v),
        markers: p.grammar(),
        methods: p.methods,
        coerce: p.coerce,
    };
    let both = "```json\n{\"state\": \"from-json\"}\n```\nSTATUS: green\n";
    let e = extract_text(both, &opts);
    assert_eq!(e.method, crate::Method::Markers);
    assert_eq!(e.value, Some(json!({"state": "green"})));
    let fenced = "```json\n{\"state\": \"from-json\"}\n```\n";
    assert_eq!(extract_text(fenced, &opts).method, crate::Method::Fenced);
    // Bare and repaired values are not allowed: nothing is extracted.
    for t in [
        "The state is {\"state\": \"bare\"}.",
        "```json\n{state: 'cut'\n```",
    ] {
        let e = extract_text(t, &opts);
        assert_eq!(e.method, crate::Method::None, "{t}");
        assert!(e.value.is_none(), "{t}");
    }
    let trace = crate::extract::trace_text("{\"state\": \"bare\"}", &opts);
    assert!(
        trace
            .candidates
            .iter()
            .any(|c| c.reason == crate::extract::Reason::NotAllowed),
        "{:?}",
        trace.candidates
    );
}

/// `pass_env` (runtime `process`'s Note [Agents get no credentials of
/// ours]): read as given; built-in profiles pass nothing.
#[test]
fn pass_env_names_our_own_variables_only() {
    let p =
        read("schema = \"answer.json\"\npass_env = [\"AGENTSHAPE_STORE\", \"AGENTSHAPE_X_1\"]\n")
            .unwrap();
    assert_eq!(p.pass_env, ["AGENTSHAPE_STORE", "AGENTSHAPE_X_1"]);
    for name in BUILTIN {
        assert!(
            Profile::builtin(name).unwrap().pass_env.is_empty(),
            "{name}"
        );
    }
}

/// Note [Copied profiles]: `schema = "builtin:NAME"` is the compiled-in
/// schema (no file is read), and each built-in as `profile show` prints it
/// loads without its repository folder and equals the built-in.
#[test]
fn builtin_schema_names_resolve_without_reading_a_file() {
    let p = read("schema = \"builtin:loop-action\"\n").unwrap();
    let want: Value = serde_json::from_str(builtin_schema_text("loop-action").unwrap()).unwrap();
    assert_eq!(p.schema, want);
    let err = read("schema = \"builtin:nope\"\n").unwrap_err().to_string();
    assert!(err.contains("p.toml"), "{err}");
    assert!(
        err.contains(
            "no built-in schema `nope` (built in: agent-response, loop-action, code-review)"
        ),
        "{err}"
    );
    for name in BUILTIN {
        let text = Profile::builtin_text_portable(name).unwrap();
        let copy = Profile::from_toml(&text, "mine.toml", "mine", &mut |path| {
            Err(format!("read `{path}`: a copy must not need a file"))
        })
        .unwrap();
        let builtin = Profile::builtin(name).unwrap();
        assert_eq!(copy.name, builtin.name, "{name}");
        assert_eq!(copy.schema, builtin.schema, "{name}");
        assert_eq!(copy.methods, builtin.methods, "{name}");
        assert_ne!(text, Profile::builtin_text(name).unwrap(), "{name}");
    }
}
