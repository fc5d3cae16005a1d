//! Schemas and profiles as JavaScript callers hand them over.
//!
//! Note \[Schema and profile forms in JS\]: a schema reaches us as JSON text
//! (the wrapper stringifies an object, or converts a Zod schema with Zod's
//! own `z.toJSONSchema` first); there is no file system in a browser, so
//! no paths. A profile is a built-in name (`claude-ops`, `claude-loop`,
//! `code-review`) or `{toml, schemas}`: the TOML text of a profile file and
//! the schemas its `schema = "file.json"` names, by that name.

use std::collections::BTreeMap;

use agentshape_core::profile::Profile;
use agentshape_core::validate::{Draft, ValidateOptions, Validator};
use serde::Deserialize;
use serde_json::Value;

use crate::errors::{Failure, Kind, Result, from_json};

/// `new Validator(schema, {draft, assertFormats, remotes})`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct CompileOptions {
    /// Force a draft whatever `$schema` says.
    pub draft: Option<String>,
    /// `format` as an assertion (`true`) or annotation (`false`).
    pub assert_formats: Option<bool>,
    /// The documents behind `$ref`s to other URIs, by URI (nothing is
    /// fetched: an unknown remote `$ref` is a `SchemaError`).
    pub remotes: Option<BTreeMap<String, Value>>,
}

/// The draft of a name (Python's `draft=` names).
pub fn draft_of(name: &str) -> Result<Draft> {
    Ok(match name {
        "4" | "draft4" | "draft-04" => Draft::Draft4,
        "6" | "draft6" | "draft-06" => Draft::Draft6,
        "7" | "draft7" | "draft-07" => Draft::Draft7,
        "2019-09" | "draft2019-09" => Draft::Draft201909,
        "2020-12" | "draft2020-12" => Draft::Draft202012,
        other => {
            return Err(Failure::usage(format!(
                "unknown draft `{other}` (known: draft-04, draft-06, draft-07, 2019-09, 2020-12)"
            )));
        }
    })
}

/// The schema's JSON text as a value: an object or a boolean.
pub fn schema_value(text: &str) -> Result<Value> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Failure::new(Kind::Schema, format!("schema is not valid JSON: {e}")))?;
    if !value.is_object() && !value.is_boolean() {
        return Err(Failure::new(
            Kind::Schema,
            "a schema is an object (or a boolean), a Zod schema, or a `Validator`",
        ));
    }
    Ok(value)
}

/// Compile the schema `text` with the options `options` (JSON text).
pub fn compile(text: &str, options: &str) -> Result<Validator> {
    let schema = schema_value(text)?;
    let opts: CompileOptions = from_json(options, "Validator options")?;
    if opts.draft.is_none() && opts.assert_formats.is_none() && opts.remotes.is_none() {
        return Ok(Validator::new(&schema)?);
    }
    let mut built = ValidateOptions::new();
    if let Some(d) = &opts.draft {
        built = built.draft(draft_of(d)?);
    }
    if let Some(yes) = opts.assert_formats {
        built = built.assert_formats(yes);
    }
    if let Some(remotes) = opts.remotes {
        built = built.retriever(move |uri: &str| {
            remotes
                .get(uri)
                .cloned()
                .ok_or_else(|| format!("no document for `{uri}` in `remotes`"))
        });
    }
    Ok(built.build(&schema)?)
}

/// A profile as the wrapper hands it over (Note \[Schema and profile forms in JS\]).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ProfileForm {
    /// A built-in name.
    Name(String),
    /// A profile file's text and the schemas it names.
    File {
        /// The TOML text.
        toml: String,
        /// Its name in messages (default `profile`).
        #[serde(default)]
        name: Option<String>,
        /// `schema = "file.json"` targets, by that name.
        #[serde(default)]
        schemas: BTreeMap<String, Value>,
    },
}

/// Load a profile.
pub fn profile(form: &ProfileForm) -> Result<Profile> {
    match form {
        ProfileForm::Name(name) => Ok(Profile::builtin(name)?),
        ProfileForm::File {
            toml,
            name,
            schemas,
        } => {
            let name = name.as_deref().unwrap_or("profile");
            let profile = Profile::from_toml(toml, name, name, &mut |file| {
                schemas
                    .get(file)
                    .map(Value::to_string)
                    .ok_or_else(|| format!("no schema `{file}` in `schemas`"))
            })?;
            Ok(profile)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_that_are_not_json_or_not_objects_are_schema_errors() {
        for text in ["{\"type\": ", "42", "\"s\"", "[1]"] {
            let e = compile(text, "{}").err().map(|f| f.kind);
            assert_eq!(e, Some(Kind::Schema), "{text}");
        }
        let e = compile("{\"type\": 12}", "{}").err();
        assert!(e.is_some_and(|f| f.kind == Kind::Schema && f.message.contains("`/type`")));
        assert!(compile("true", "{}").is_ok());
    }

    #[test]
    fn remotes_resolve_refs_and_unknown_ones_fail() {
        let schema = r#"{"$ref": "http://x.test/s.json"}"#;
        let opts = r#"{"remotes": {"http://x.test/s.json": {"type": "integer"}}}"#;
        let v = compile(schema, opts).ok();
        assert!(v.is_some_and(
            |v| v.is_valid(&serde_json::json!(1)) && !v.is_valid(&serde_json::json!("a"))
        ));
        assert_eq!(
            compile(schema, "{}").err().map(|f| f.kind),
            Some(Kind::Schema)
        );
    }

    #[test]
    fn bad_options_and_drafts_are_usage_errors() {
        assert_eq!(
            compile("{}", r#"{"draft": "9"}"#).err().map(|f| f.kind),
            Some(Kind::Usage)
        );
        assert_eq!(
            compile("{}", r#"{"nope": 1}"#).err().map(|f| f.kind),
            Some(Kind::Usage)
        );
    }

    #[test]
    fn profiles_by_name_and_by_text() {
        assert!(profile(&ProfileForm::Name("claude-ops".into())).is_ok());
        let e = profile(&ProfileForm::Name("nope".into())).err();
        assert!(e.is_some_and(
            |f| f.kind == Kind::Profile && f.message.contains("unknown profile `nope`")
        ));
        let form: ProfileForm = serde_json::from_str(
            r#"{"toml": "schema = \"s.json\"\n", "schemas": {"s.json": {"required": ["a"]}}}"#,
        )
        .unwrap_or(ProfileForm::Name(String::new()));
        let p = profile(&form);
        assert!(p.is_ok_and(|p| p.schema["required"][0] == "a"));
    }
}
