//! `--redact-paths`: the project path as `<project>` and home folders as
//! `~`, in every string of an export (Note \[Export\]).
//!
//! A path is replaced where it stands whole: `/home/ana` in `/home/ana/x`
//! or at the end of a string, not in `/home/anabel`. Replacing is done on
//! the strings before they are drawn, so each format escapes the result
//! its own way. Redacting too much is the safe side: a path that merely
//! contains the project's (`/mnt/home/ana/...`) is cut as well.

use std::borrow::Cow;

use agentshape_store::query::Session;
use serde_json::Value;

use super::bundle::{Bundle, Part};

/// What replaces what, the longest first.
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    pairs: Vec<(String, &'static str)>,
}

/// A path worth replacing: absolute, not `/`, no trailing `/`.
fn usable(p: &str) -> Option<String> {
    let p = p.trim_end_matches('/');
    (p.len() > 1 && p.starts_with('/')).then(|| p.to_owned())
}

/// The home a project path sits in: `/home/NAME`, `/Users/NAME`, `/root`.
fn home_of(project: &str) -> Option<String> {
    let mut parts = project.split('/').skip(1);
    match (parts.next(), parts.next()) {
        (Some("root"), _) => Some("/root".to_owned()),
        (Some(top @ ("home" | "Users")), Some(name)) if !name.is_empty() => {
            Some(format!("/{top}/{name}"))
        }
        _ => None,
    }
}

impl Redactor {
    /// For a session in `project`, on a machine whose homes are `homes`;
    /// `None` when there is nothing to replace.
    pub(crate) fn new(project: Option<&str>, homes: &[String]) -> Option<Redactor> {
        let mut pairs: Vec<(String, &'static str)> = Vec::new();
        if let Some(p) = project.and_then(usable) {
            pairs.push((p, "<project>"));
        }
        let derived = project.and_then(home_of);
        for h in homes.iter().map(String::as_str).chain(derived.as_deref()) {
            if let Some(h) = usable(h)
                && !pairs.iter().any(|(p, _)| *p == h)
            {
                pairs.push((h, "~"));
            }
        }
        // The longest first: the project inside a home is the project.
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        (!pairs.is_empty()).then_some(Redactor { pairs })
    }

    /// `s` with every whole occurrence replaced.
    pub(crate) fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(s);
        for (path, with) in &self.pairs {
            if out.contains(path.as_str()) {
                out = Cow::Owned(replace_whole(&out, path, with));
            }
        }
        out
    }

    fn string(&self, s: &mut String) {
        if let Cow::Owned(t) = self.text(s) {
            *s = t;
        }
    }

    fn opt(&self, s: &mut Option<String>) {
        if let Some(s) = s {
            self.string(s);
        }
    }

    /// Every string in `v`.
    pub(crate) fn value(&self, v: &mut Value) {
        match v {
            Value::String(s) => self.string(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(x)),
            Value::Object(m) => m.values_mut().for_each(|x| self.value(x)),
            _ => {}
        }
    }

    /// The session's fields that can hold a path.
    fn session(&self, s: &mut Session) {
        for f in [
            &mut s.project,
            &mut s.summary,
            &mut s.error,
            &mut s.escalation,
            &mut s.raw_log_path,
            &mut s.source_path,
        ] {
            self.opt(f);
        }
    }

    fn part(&self, p: &mut Part) {
        self.session(&mut p.session);
        for r in &mut p.rows {
            self.value(&mut r.body);
        }
    }

    /// Everything an export draws.
    pub(crate) fn bundle(&self, b: &mut Bundle) {
        self.part(&mut b.root);
        b.subs.iter_mut().for_each(|p| self.part(p));
    }
}

/// `s` with each `path` not followed by a name character replaced by `with`.
fn replace_whole(s: &str, path: &str, with: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(path) {
        let after = &rest[i + path.len()..];
        let whole = !after
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-'));
        out.push_str(&rest[..i]);
        out.push_str(if whole { with } else { path });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_then_the_homes_are_replaced_where_they_stand_whole() {
        let r = Redactor::new(Some("/home/ana/src/app/"), &["/home/ci".to_owned()]).unwrap();
        let s = "cd /home/ana/src/app && cat /home/ana/.ssh/config /home/anabel/x \
                 /home/ana/src/apple /home/ci/log /home/ana";
        assert_eq!(
            r.text(s),
            "cd <project> && cat ~/.ssh/config /home/anabel/x ~/src/apple ~/log ~"
        );
        let mut v =
            serde_json::json!({"a": ["/home/ana/src/app/main.rs", 1], "b": {"c": "/home/ci"}});
        r.value(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": ["<project>/main.rs", 1], "b": {"c": "~"}})
        );
    }

    #[test]
    fn root_and_empty_paths_are_never_replaced() {
        assert!(Redactor::new(Some("/"), &[String::new(), "/".to_owned()]).is_none());
        assert!(Redactor::new(None, &[]).is_none());
        let r = Redactor::new(Some("/root/w"), &[]).unwrap();
        assert_eq!(
            r.text("/root/w/a /root/b /rooted"),
            "<project>/a ~/b /rooted"
        );
        let r = Redactor::new(Some("/Users/bo/p"), &[]).unwrap();
        assert_eq!(r.text("/Users/bo/.zshrc"), "~/.zshrc");
    }
}
