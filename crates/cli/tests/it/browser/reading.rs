//! Reading a session in a real browser (issue 41 §1): the transcript near
//! the top of the page, Markdown drawn (headings as headings, no `**`
//! left, Markdown-borne script inert), an `Edit` as a diff with its lines
//! added and removed marked, a `Bash` call as its command and exit code, a
//! run of sub-agent progress rows as one line, a `Task` linked to its
//! sub-agent; over a store filled with rows shaped as the importer writes
//! them, and over real agent files imported with `agentshape import`
//! (`../shared/corpus/native`, skipped with a message when absent).
//!
//! `AGENTSHAPE_READING_SCREENSHOTS=DIR` saves the pages as PNGs there.

// Small fixture arithmetic: counts and milliseconds far inside every range.
#![allow(clippy::cast_possible_wrap)]

use std::path::{Path, PathBuf};

use agentshape_store::{FeedEntry, NativeMark, Session, SqliteStore, Store, time};
use serde_json::{Value, json};

use super::{Browser, serve};

/// The session of the synthetic store.
pub(crate) const READING: &str = "7b0e91c2-reading-session";
/// Its sub-agent.
const CHILD: &str = "f00dcafe";
/// Progress rows the sub-agent writes in a row (as in a real file).
const PROGRESS: usize = 70;

fn mark(id: &str) -> NativeMark {
    NativeMark {
        path: format!("/home/ana/.claude/projects/-srv-app/{id}.jsonl"),
        session_id: id.to_owned(),
        agent: "claude-code".to_owned(),
        dev: 1,
        inode: 1,
        size: 0,
        offset: 0,
        mtime_ms: 0,
        lines: 0,
        updated_at: time::now(),
        reset: false,
        expect_offset: None,
    }
}

/// Rows as the importer writes them (runtime's Note [Native feed rows]):
/// one per event, line numbers rising, one second apart.
fn rows(id: &str, start_ms: i64, events: &[(Option<&str>, Value)]) -> Vec<FeedEntry> {
    events
        .iter()
        .enumerate()
        .map(|(i, (model, event))| {
            let mut body = json!({"kind": "event", "event": event, "line": i + 1});
            if let Some(m) = model {
                body["model"] = json!(m);
            }
            FeedEntry {
                seq: None,
                session_id: id.to_owned(),
                kind: "event".to_owned(),
                body: body.to_string(),
                created_at: time::format_ms(start_ms + 1000 * (i as i64 + 1)),
            }
        })
        .collect()
}

const PLAN: &str = "# Plan\n\n## Steps\n\n1. **Read** `deploy.sh`\n2. Make *staging* the default\n\n\
```bash\nDEPLOY_TARGET=${DEPLOY_TARGET:-staging}\n```\n\n\
| file | change |\n|---|---|\n| deploy.sh | default |\n\n\
See [the docs](https://example.com/docs), [this](javascript:window.__pwned=1), \
![a chart](https://example.com/c.png) and <img src=x onerror=\"window.__pwned=1\"> \
<script>window.__pwned=1</script>";

pub(crate) fn fill_reading(db: &Path) {
    let mut store = SqliteStore::open(db).unwrap();
    let start = time::now_ms() - 3_600_000;
    let sonnet = Some("claude-sonnet-4-5-20250929");
    let mut r = Session::new(READING, &time::format_ms(start), "completed");
    r.agent = Some("claude-code".into());
    r.agent_version = Some("2.1.23".into());
    r.model = sonnet.map(Into::into);
    r.project = Some("/srv/app".into());
    r.ended_at = Some(time::format_ms(start + 600_000));
    r.summary = Some("Make the deploy script default to staging".into());
    let mut events = vec![
        (
            None,
            json!({"type": "user_text", "text": "Make the deploy script default to staging, then check it."}),
        ),
        (sonnet, json!({"type": "message", "id": "msg_1"})),
        (sonnet, json!({"type": "text", "text": PLAN})),
        (sonnet, json!({"type": "text", "text": "  "})),
        (
            sonnet,
            json!({"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {"file_path": "/srv/app/deploy.sh", "offset": 1, "limit": 40}}),
        ),
        (
            None,
            json!({"type": "tool_result", "tool_use_id": "toolu_r", "is_error": false, "content": "     1→#!/bin/sh\n     2→DEPLOY_TARGET=${DEPLOY_TARGET:-prod}"}),
        ),
        (
            sonnet,
            json!({"type": "tool_use", "id": "toolu_e", "name": "Edit", "input": {"file_path": "/srv/app/deploy.sh",
            "old_string": "#!/bin/sh\nDEPLOY_TARGET=${DEPLOY_TARGET:-prod}\nexec ./push", "new_string": "#!/bin/sh\nDEPLOY_TARGET=${DEPLOY_TARGET:-staging}\nexec ./push"}}),
        ),
        (
            None,
            json!({"type": "tool_result", "tool_use_id": "toolu_e", "is_error": false, "content": "The file /srv/app/deploy.sh has been updated."}),
        ),
        (
            sonnet,
            json!({"type": "tool_use", "id": "toolu_b", "name": "Bash", "input": {"command": "sh -n deploy.sh && ./deploy.sh --dry-run", "description": "Check the script"}}),
        ),
        (
            None,
            json!({"type": "tool_result", "tool_use_id": "toolu_b", "is_error": true, "content": "Exit code 3\nerror: no target host for staging"}),
        ),
        (
            None,
            json!({"type": "tool_error", "tool_use_id": "toolu_b", "name": "Bash"}),
        ),
        (
            sonnet,
            json!({"type": "tool_use", "id": "toolu_t", "name": "Task", "input": {"description": "Find the staging host", "prompt": "Find where the staging host is set", "subagent_type": "Explore"}}),
        ),
    ];
    for _ in 0..PROGRESS {
        events.push((
            None,
            json!({"type": "sub_agent", "agent_id": CHILD, "tool_use_id": "toolu_t"}),
        ));
    }
    events.extend([
        (None, json!({"type": "tool_result", "tool_use_id": "toolu_t", "is_error": false, "content": "## Found\n\nThe host is in **hosts.toml**."})),
        (sonnet, json!({"type": "tool_use", "id": "toolu_d", "name": "TodoWrite", "input": {"todos": [
            {"content": "Default to staging", "status": "completed"}, {"content": "Add the staging host", "status": "in_progress"}]}})),
        (sonnet, json!({"type": "text", "text": "**Done.** The default is now `staging`; the host still needs adding."})),
    ]);
    store
        .save_native(&r, &rows(READING, start, &events), &mark(READING))
        .unwrap();
}

/// The page's checks that hold for any session: where the transcript's
/// first row is, Markdown with no `**` left outside code, nothing injected.
const PAGE_JS: &str = r"
const first = document.querySelector('#transcript .line:not([hidden])');
const md = Array.from(document.querySelectorAll('#transcript .md')).map((m) => {
  const c = m.cloneNode(true);
  for (const code of c.querySelectorAll('code, pre')) code.remove();
  return c.textContent;
}).join('\n');
const bad = [];
if (typeof window.__pwned !== 'undefined') bad.push('window.__pwned is set');
for (const el of document.querySelectorAll('#transcript img, #transcript script, #transcript svg, #transcript iframe')) bad.push(el.outerHTML);
for (const a of document.querySelectorAll('#transcript a[href]')) {
  const h = a.getAttribute('href');
  if (!/^(https?:\/\/|\/sessions\/|#row-)/.test(h)) bad.push('a link to ' + h);
  if (/^https?:/.test(h) && a.rel !== 'noopener noreferrer nofollow') bad.push('rel ' + a.rel);
}
for (const el of document.querySelectorAll('#transcript *')) {
  for (const at of el.attributes) if (at.name.startsWith('on') || at.name === 'style') bad.push('attribute ' + at.name);
}
const heading = Array.from(document.querySelectorAll('h2')).find((h) => h.textContent === 'Transcript');
return {
  firstTop: first ? first.getBoundingClientRect().top + window.scrollY : null,
  afterHeading: first && heading ? first.getBoundingClientRect().top - heading.getBoundingClientRect().bottom : null,
  headings: document.querySelectorAll('#transcript .md h1, #transcript .md h2, #transcript .md h3').length,
  stars: md.includes('**'),
  bad: bad.join('; '),
};";

fn shot(browser: &Browser, name: &str, css: Option<&str>) {
    if let Some(dir) = std::env::var_os("AGENTSHAPE_READING_SCREENSHOTS") {
        let path = PathBuf::from(dir).join(name);
        match css {
            Some(css) => browser.screenshot_at(&path, css, 80),
            None => browser.screenshot(&path),
        }
    }
}

#[test]
fn a_session_reads_as_markdown_diffs_commands_and_one_progress_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("reading.db");
    fill_reading(&db);
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    browser.goto(&format!("/sessions/{READING}"));
    browser.find("#transcript .line");
    let page = browser.js(PAGE_JS);
    assert_eq!(page["bad"], "", "{page}");
    assert!(
        page["firstTop"].as_f64().unwrap() < 1000.0,
        "the transcript starts in the first 1,000 px: {page}"
    );
    assert_eq!(page["stars"], false, "{page}");
    let md = browser.js(
        "const m = document.querySelector('#transcript .line.t-text .md');
         return { h1: m.querySelector('h1')?.textContent, h2: m.querySelector('h2')?.textContent,
                  strong: m.querySelector('strong')?.textContent, table: m.querySelectorAll('td').length,
                  code: m.querySelectorAll('pre.code span[class^=hl-]').length,
                  link: m.querySelector('a[href^=https]')?.textContent,
                  inert: m.textContent.includes('<script>window.__pwned=1</script>'),
                  h1size: parseFloat(getComputedStyle(m.querySelector('h1')).fontSize) };",
    );
    assert_eq!(md["h1"], "Plan", "{md}");
    assert_eq!(md["h2"], "Steps", "{md}");
    assert_eq!(md["strong"], "Read", "{md}");
    assert_eq!(md["table"], 2, "{md}");
    assert!(
        md["code"].as_u64().unwrap() > 0,
        "the code block is highlighted: {md}"
    );
    assert_eq!(md["link"], "the docs", "{md}");
    assert_eq!(md["inert"], true, "raw HTML reads as written: {md}");
    assert!(md["h1size"].as_f64().unwrap() > 14.0, "{md}");

    let edit = browser.js(
        "const d = document.querySelector('#transcript .line.t-tool_use .diff');
         if (!d) return null;
         const add = d.querySelector('.add'), del = d.querySelector('.del'), ctx = d.querySelector('.ctx');
         return { path: d.querySelector('.path').textContent, add: add.textContent, del: del.textContent,
                  addBg: getComputedStyle(add).backgroundColor, delBg: getComputedStyle(del).backgroundColor,
                  ctxBg: getComputedStyle(ctx).backgroundColor, visible: add.getClientRects().length > 0 };",
    );
    assert_eq!(edit["path"], "/srv/app/deploy.sh", "{edit}");
    assert!(edit["add"].as_str().unwrap().contains("staging"), "{edit}");
    assert!(edit["del"].as_str().unwrap().contains("prod"), "{edit}");
    assert_eq!(edit["visible"], true, "{edit}");
    assert_ne!(edit["addBg"], edit["delBg"], "{edit}");
    assert_ne!(
        edit["addBg"], edit["ctxBg"],
        "added lines are marked: {edit}"
    );

    let bash = browser.js(
        "const s = document.querySelector('#transcript .shell');
         return { cmd: s.querySelector('.cmd').textContent, exit: s.querySelector('.exit').textContent,
                  failed: s.querySelector('.exit').classList.contains('failed'),
                  out: s.querySelector('pre.out').textContent,
                  color: getComputedStyle(s.querySelector('.exit')).color,
                  ok: getComputedStyle(document.querySelector('#transcript .tool:not(.failed)')).borderTopColor,
                  border: getComputedStyle(s.closest('.tool')).borderTopColor };",
    );
    assert_eq!(
        bash["cmd"], "sh -n deploy.sh && ./deploy.sh --dry-run",
        "{bash}"
    );
    assert_eq!(bash["exit"], "exit 3", "{bash}");
    assert_eq!(bash["failed"], true, "{bash}");
    assert_eq!(bash["out"], "error: no target host for staging", "{bash}");
    assert_ne!(
        bash["border"], bash["ok"],
        "the failed call is highlighted: {bash}"
    );

    let progress = browser.js(
        "const shown = Array.from(document.querySelectorAll('#transcript .line.t-sub_agent')).filter((l) => !l.hidden);
         return { shown: shown.length, all: document.querySelectorAll('#transcript .line.t-sub_agent').length,
                  text: shown[0]?.querySelector('summary').textContent,
                  child: document.querySelector('#transcript .line.t-tool_use a.child')?.getAttribute('href'),
                  report: document.querySelector('#transcript details.result .md h2')?.textContent,
                  todo: Array.from(document.querySelectorAll('#transcript ul.checklist li')).map((l) => l.dataset.status) };",
    );
    assert_eq!(progress["shown"], 1, "{progress}");
    assert_eq!(
        progress["all"], PROGRESS,
        "every row keeps its line: {progress}"
    );
    assert!(
        progress["text"].as_str().unwrap().contains(&format!(
            "{PROGRESS} progress updates from sub-agent {CHILD}"
        )),
        "{progress}"
    );
    assert_eq!(
        progress["child"],
        format!("/sessions/agent-{CHILD}"),
        "{progress}"
    );
    assert_eq!(progress["report"], "Found", "{progress}");
    assert_eq!(
        progress["todo"],
        json!(["completed", "in_progress"]),
        "{progress}"
    );
    // The run opens to its updates.
    browser.click("#transcript .line.t-sub_agent:not([hidden]) summary");
    let opened = browser.wait_js(
        "the run's updates",
        "const li = document.querySelectorAll('#transcript details.progress[open] ol.times li');
         return li.length > 0 ? li.length : null;",
    );
    assert_eq!(opened, PROGRESS, "{opened}");
    // Empty replies are not drawn; the results are drawn with their calls.
    let hidden = browser.js(
        "return { empty: Array.from(document.querySelectorAll('#transcript .line.t-text')).filter((l) => !l.hidden).length,
                  results: Array.from(document.querySelectorAll('#transcript .line.t-tool_result')).filter((l) => !l.hidden).length };",
    );
    assert_eq!(hidden, json!({"empty": 2, "results": 0}), "{hidden}");
    shot(&browser, "reading-top.png", None);
    shot(
        &browser,
        "reading-tools.png",
        Some("#transcript .line.t-tool_use"),
    );
    browser.assert_clean("a session read");
}

/// The real files of `../shared/corpus/native`, when this checkout has them.
fn corpus() -> Option<PathBuf> {
    [
        crate::support::repo_root().join("../shared/corpus/native"),
        crate::support::repo_root().join("../../shared/corpus/native"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
}

/// Import `file` into `db`; the session id the importer gave it.
fn import(db: &Path, file: &Path) -> String {
    let out = crate::support::agentshape_std()
        .args(["import", "--json", "--store"])
        .arg(db)
        .arg(file)
        .env_remove("AGENTSHAPE_STORE")
        .env_remove("AGENTSHAPE_PRICES")
        .output()
        .unwrap();
    assert!(out.status.success(), "import: {out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["session_id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no session id in {text}"))
}

/// Real Claude Code, Codex and Gemini CLI files, imported: each page
/// starts its transcript in the first 1,000 px, draws its Markdown with no
/// `**` left and its tools as what they did, and breaks no page rule.
#[test]
fn imported_real_files_read_as_what_the_agents_did() {
    let Some(corpus) = corpus() else {
        println!("skipped: ../shared/corpus/native not found");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("corpus.db");
    // (file, what its first page must draw)
    let files = [
        (
            "claude/slopus__happy-cli__400429ba-c1e1-4ef5-a7ec-fe40608df53b.jsonl",
            &["diff", "shell", "headings"][..],
        ),
        (
            "claude/d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
            &["diff", "shell", "checklist"][..],
        ),
        (
            "codex/madshn__localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
            &[][..],
        ),
        (
            "gemini/entireio__cli__12cbfeaa512b-0-gemini-session.json",
            &["diff"][..],
        ),
    ];
    let mut ids = Vec::new();
    for (file, _) in &files {
        let path = corpus.join(file);
        if !path.is_file() {
            println!("skipped: {} not found", path.display());
            return;
        }
        ids.push(import(&db, &path));
    }
    let server = serve(&db, &[]);
    let mut browser = Browser::open(&server.base);
    for ((file, wants), id) in files.iter().zip(&ids) {
        browser.goto(&format!("/sessions/{id}"));
        browser.find("#transcript .line");
        let page = browser.js(PAGE_JS);
        assert_eq!(page["bad"], "", "{file}: {page}");
        // The header folds what a reader does not ask first (the
        // validation, a sub-agent tree of more than 3): the transcript's
        // first row is on the first screen, right under its heading.
        assert!(
            page["firstTop"].as_f64().unwrap() < 1000.0,
            "{file}: the transcript starts in the first 1,000 px: {page}"
        );
        assert!(
            page["afterHeading"].as_f64().unwrap() < 150.0,
            "{file}: {page}"
        );
        assert_eq!(page["stars"], false, "{file}: {page}");
        let drawn = browser.js(
            "return { diff: document.querySelectorAll('#transcript .diff .add, #transcript .diff .del').length,
                      shell: document.querySelectorAll('#transcript .shell .cmd').length,
                      exits: Array.from(document.querySelectorAll('#transcript .shell .exit')).map((e) => e.textContent),
                      checklist: document.querySelectorAll('#transcript ul.checklist li').length };",
        );
        for want in *wants {
            let n = match *want {
                "headings" => &page["headings"],
                w => &drawn[w],
            };
            assert!(n.as_u64().unwrap() > 0, "{file}: {want}: {drawn} {page}");
        }
        if wants.contains(&"shell") {
            let exits = drawn["exits"].as_array().unwrap();
            assert!(
                exits
                    .iter()
                    .all(|e| e.as_str().unwrap().starts_with("exit ")
                        || e == "failed"
                        || e == "no result"),
                "{file}: {drawn}"
            );
            assert!(exits.iter().any(|e| e == "exit 0"), "{file}: {drawn}");
        }
        browser.assert_clean(file);
    }
    shot(&browser, "reading-gemini.png", None);
    browser.goto(&format!("/sessions/{}", ids[0]));
    browser.find("#transcript .line");
    shot(&browser, "reading-claude.png", Some("#transcript"));
}
