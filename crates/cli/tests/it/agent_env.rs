//! Runtime `process`'s Note [Agents get no credentials of ours]: the agents
//! `run` and `ops` start inherit the user's environment but none of
//! agentshape's own variables (the store URL with its password, the serve
//! token), unless a profile or the ops config names one in `pass_env`. The
//! agent here is a script that prints its environment into its transcript,
//! as a real agent's logs would, and then replays a recorded run.

use std::path::{Path, PathBuf};

use crate::support::{agent_script, example};
use crate::support::{agentshape, assert_exit, json_lines};

const STORE_URL: &str = "postgres://ops:pw-s3cret@db.invalid/agentshape";
const TOKEN: &str = "serve-token-0123456789abcdef";

/// An agent that prints `env` (one `ENV ` line each) then acts as the fake agent.
fn env_agent(dir: &Path) -> PathBuf {
    agent_script(dir, "env-agent", "env | sed 's/^/ENV /'\n")
}

/// The `ENV NAME=value` lines of an agent's transcript, as `NAME=value`.
fn seen_env(transcript: &Path) -> Vec<String> {
    std::fs::read_to_string(transcript)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("ENV ").map(str::to_owned))
        .collect()
}

fn has(env: &[String], name: &str) -> bool {
    env.iter().any(|l| l.starts_with(&format!("{name}=")))
}

fn run_agent(dir: &Path, profile: Option<&Path>) -> Vec<String> {
    let mut cmd = agentshape();
    cmd.args(["run", "--json", "--log-dir"])
        .arg(dir.join("logs"))
        // The store comes from the environment, as a fleet sets it: a SQLite
        // file here (a real one to write to), named like a password would be.
        .env("AGENTSHAPE_STORE", dir.join("store-pw-s3cret.db"))
        .env("AGENTSHAPE_TOKEN", TOKEN)
        .env("ANTHROPIC_API_KEY", "sk-users-own-key")
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"));
    if let Some(p) = profile {
        cmd.arg("--profile").arg(p);
    }
    let out = cmd.arg("--").arg(env_agent(dir)).output().unwrap();
    assert_exit(&out, 0);
    let session = &json_lines(&out.stdout)[0]["session"];
    assert!(
        dir.join("store-pw-s3cret.db").exists(),
        "run used the store"
    );
    let env = seen_env(Path::new(session["raw_log_path"].as_str().unwrap()));
    assert!(has(&env, "PATH"), "the agent saw an environment: {env:?}");
    env
}

#[test]
fn run_gives_the_agent_the_users_keys_but_not_agentshapes_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let env = run_agent(dir.path(), None);
    assert!(
        !env.iter().any(|l| l.starts_with("AGENTSHAPE_")),
        "agentshape's own variables reached the agent: {env:?}"
    );
    assert!(
        !env.iter()
            .any(|l| l.contains("s3cret") || l.contains(TOKEN))
    );
    // What the user gave the agent stays: it needs its own API key.
    assert!(env.contains(&"ANTHROPIC_API_KEY=sk-users-own-key".to_owned()));
    assert!(has(&env, "FAKE_TRANSCRIPT"));
}

#[test]
fn a_profile_passes_on_exactly_what_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("fleet.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"fleet\"\nschema = {:?}\npass_env = [\"AGENTSHAPE_STORE\"]\n",
            crate::support::repo_root()
                .join("schemas/agent-response.json")
                .display()
                .to_string()
        ),
    )
    .unwrap();
    let env = run_agent(dir.path(), Some(&profile));
    let store = dir.path().join("store-pw-s3cret.db");
    assert!(
        env.contains(&format!("AGENTSHAPE_STORE={}", store.display())),
        "{env:?}"
    );
    assert!(!has(&env, "AGENTSHAPE_TOKEN"), "{env:?}");

    // A name that is not ours is refused: it would pass anyway.
    std::fs::write(
        &profile,
        "name = \"fleet\"\nschema = '{\"type\": \"object\"}'\npass_env = [\"HOME\"]\n",
    )
    .unwrap();
    let out = agentshape()
        .args(["run", "--no-store", "--profile"])
        .arg(&profile)
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 64);
    assert!(err.contains("pass_env") && err.contains("`HOME`"), "{err}");
}

/// `ops` tiers: the same rule, with `pass_env` in the config.
#[test]
fn ops_tiers_get_agentshapes_variables_only_through_pass_env() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p1.md"), "check").unwrap();
    let agent = env_agent(d);
    let ops = |pass_env: &str| {
        std::fs::write(
            d.join("ops.toml"),
            format!(
                "command = [{:?}]\nstore = {:?}\nlog_dir = {:?}\n{pass_env}\n[policy]\nmax_tier = 1\n\n[[tiers]]\nname = \"t1\"\nmodel = \"t1\"\nprompt = \"p1.md\"\n",
                agent.display().to_string(),
                d.join("ops.db").display().to_string(),
                d.join("logs").display().to_string(),
            ),
        )
        .unwrap();
        agentshape()
            .args(["ops", "--once", "--json", "--config"])
            .arg(d.join("ops.toml"))
            .env("AGENTSHAPE_STORE", STORE_URL)
            .env("AGENTSHAPE_TOKEN", TOKEN)
            .env("ANTHROPIC_API_KEY", "sk-users-own-key")
            .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
            .output()
            .unwrap()
    };
    let last_log = || {
        let mut logs: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(d.join("logs"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ndjson"))
            .map(|p| (p.metadata().unwrap().modified().unwrap(), p))
            .collect();
        logs.sort();
        seen_env(&logs.last().unwrap().1)
    };
    let out = ops("");
    assert_exit(&out, 0);
    let env = last_log();
    assert!(
        has(&env, "PATH") && has(&env, "ANTHROPIC_API_KEY"),
        "{env:?}"
    );
    assert!(
        !env.iter()
            .any(|l| l.starts_with("AGENTSHAPE_") || l.contains("s3cret")),
        "{env:?}"
    );

    std::thread::sleep(std::time::Duration::from_millis(20));
    let out = ops("pass_env = [\"AGENTSHAPE_STORE\"]");
    assert_exit(&out, 0);
    let env = last_log();
    assert!(
        env.contains(&format!("AGENTSHAPE_STORE={STORE_URL}")),
        "{env:?}"
    );
    assert!(!has(&env, "AGENTSHAPE_TOKEN"), "{env:?}");

    let out = ops("pass_env = [\"PATH\"]");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 64);
    assert!(
        err.contains("`pass_env`") && err.contains("`PATH`"),
        "{err}"
    );
}

/// A local tier runs agentshape itself, which needs to know where its
/// models are: `AGENTSHAPE_MODEL_DIR` goes through, credentials do not.
#[cfg(feature = "local")]
#[test]
fn a_local_ops_tier_gets_the_model_dir_and_nothing_else_of_ours() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p1.md"), "check").unwrap();
    std::fs::write(d.join("reply.txt"), "{\"summary\": \"ok\"}\n").unwrap();
    std::fs::write(
        d.join("ops.toml"),
        format!(
            "agent = \"local\"\ncommand = [{:?}]\nstore = {:?}\nlog_dir = {:?}\n[policy]\nmax_tier = 1\n\n[[tiers]]\nname = \"t1\"\nmodel = \"tiny\"\nprompt = \"p1.md\"\n",
            env_agent(d).display().to_string(),
            d.join("ops.db").display().to_string(),
            d.join("logs").display().to_string(),
        ),
    )
    .unwrap();
    let out = agentshape()
        .args(["ops", "--once", "--json", "--config"])
        .arg(d.join("ops.toml"))
        .env("AGENTSHAPE_STORE", STORE_URL)
        .env("AGENTSHAPE_TOKEN", TOKEN)
        .env("AGENTSHAPE_MODEL_DIR", d.join("models"))
        .env("FAKE_TRANSCRIPT", d.join("reply.txt"))
        .output()
        .unwrap();
    let log = std::fs::read_dir(d.join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "ndjson"))
        .unwrap_or_else(|| panic!("no log: {}", String::from_utf8_lossy(&out.stderr)));
    let env = seen_env(&log);
    let ours: Vec<&String> = env
        .iter()
        .filter(|l| l.starts_with("AGENTSHAPE_"))
        .collect();
    assert_eq!(
        ours,
        [&format!(
            "AGENTSHAPE_MODEL_DIR={}",
            d.join("models").display()
        )],
        "{env:?}"
    );
}
