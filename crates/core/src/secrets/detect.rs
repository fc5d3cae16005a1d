//! The rules compiled once into one detector.
//!
//! Note \[Keyword prefilter\]: one table of every rule's keywords (ASCII
//! case-insensitive; Note \[Keyword triples\] in `keywords.rs`); one pass over
//! the text says which rules
//! may hit, and only those rules' regexes run (rules without keywords always
//! run; the built-in set has none). This is gitleaks' own gate, so it changes
//! no rule's meaning. Each pass is linear in the text (the `regex` crate
//! guarantees linear time; the keyword pass too), so a text costs
//! O(len × (1 + rules whose keywords occur)). On ordinary transcript text the
//! keywords of a handful of rules occur (`key`, `token`, `api`, `ey`), so a
//! handful of regexes run. (A `RegexSet` over all ~220 patterns is the
//! other way; it was not measured.)

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use regex::{Regex, RegexBuilder};

use super::facts::Facts;
use super::keywords::{Keywords, keyword_shape};
use super::rules::{Allowlist, Rule, RuleSet};
use super::stopwords::Stopwords;
use super::syntax::go_to_rust;
use super::{SecretsError, one_line};
use super::{encoded, gate, hand_gate, needs};

/// A secret found in a text: the byte range of the secret itself (the rule's
/// `secretGroup`), on char boundaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The id of the rule that found it.
    pub rule: Arc<str>,
    /// Byte offset of the secret's first byte.
    pub start: usize,
    /// Byte offset just past the secret.
    pub end: usize,
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Secret,
    Match,
    Line,
}

#[derive(Debug)]
struct CompiledAllowlist {
    and: bool,
    target: Target,
    /// The regexes as one alternation, built for `is_match` only (Note
    /// \[Relaxed gates\] says why that compiles faster: an allowlist asks
    /// whether, never where), and for a built-in rule only when a candidate
    /// reaches it and its stopwords did not already decide.
    regex: Option<AllowRegex>,
    stopwords: Option<Stopwords>,
}

/// An allowlist's regexes, compiled on first use.
#[derive(Debug)]
struct AllowRegex {
    /// The alternation, Rust syntax.
    pattern: String,
    compiled: OnceLock<Option<regex_automata::meta::Regex>>,
}

impl AllowRegex {
    fn is_match(&self, text: &str) -> bool {
        self.compiled
            .get_or_init(|| compile_is_match(&self.pattern))
            .as_ref()
            .is_some_and(|r| r.is_match(text))
    }
}

/// Note \[Lifted prefix\]: 95 of gitleaks' rules (the generic one among
/// them) start `(?i)[\w.-]{0,50}?` and then a keyword: "up to 50 identifier
/// characters, as few as will do". A DFA running that from every position
/// carries up to 50 starts at once; on keyword-dense text the generic rule
/// alone ran at 22 MB/s. Such a rule runs as its rest (`(?i)` and what
/// follows the prefix, a keyword first: a fast literal search) and the
/// prefix is added back by walking left from the rest's match over at most 50
/// identifier characters, not into the previous match. That is the same
/// match: the leftmost start of the whole pattern belongs to the leftmost
/// match of the rest (any earlier start would also reach that rest's match
/// over identifier characters), and the lazy prefix then takes the fewest
/// characters that reach it, which is the rest's leftmost match itself.
/// Applied only when the rest has no top-level `|` (which would bind the
/// prefix to one branch).
#[derive(Debug)]
enum Matcher {
    Plain(Regex),
    Lifted { rest: Regex, max: usize },
}

/// Rules whose per-line bits `hot_spans` keeps on the stack: more than the
/// built-in set has (a test holds it to that); a set with more takes a
/// block from the heap per line.
const MAY_INLINE: usize = 256;

/// The one prefix lifted (Note \[Lifted prefix\]).
const LIFTED_PREFIX: &str = r"(?i)[\w.-]{0,";

/// Splits `(?i)[\w.-]{0,N}?REST` into N and REST when REST has no top-level `|`.
fn lift(pattern: &str) -> Option<(usize, &str)> {
    let after = pattern.strip_prefix(LIFTED_PREFIX)?;
    let close = after.find("}?")?;
    let max: usize = after[..close].parse().ok()?;
    let rest = &after[close + 2..];
    let (mut depth, mut in_class, mut escaped) = (0i32, false, false);
    for c in rest.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => depth += 1,
            ')' if !in_class => depth -= 1,
            '|' if !in_class && depth == 0 => return None,
            _ => {}
        }
    }
    (!rest.is_empty()).then_some((max, rest))
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'
}

impl Matcher {
    /// `checked`: compile the whole pattern even when only its rest runs,
    /// so that an error names the pattern as written (a user's rule). A
    /// built-in rule is not checked again at run time: a test compiles
    /// every one, and compiling the generic rule whole was a fifth of what
    /// masking added to a short command (callgrind).
    fn new(id: &str, pattern: &str, checked: bool) -> Result<Matcher, SecretsError> {
        Ok(match lift(pattern) {
            Some((max, rest)) => {
                if checked {
                    compile(id, pattern)?;
                }
                Matcher::Lifted {
                    rest: compile(id, &format!("(?i){rest}"))?,
                    max,
                }
            }
            None => Matcher::Plain(compile(id, pattern)?),
        })
    }

    fn regex(&self) -> &Regex {
        match self {
            Matcher::Plain(r) | Matcher::Lifted { rest: r, .. } => r,
        }
    }

    /// Calls `each(match_start, captures)` for every match, in order.
    fn for_each<'t>(&self, text: &'t str, mut each: impl FnMut(usize, &regex::Captures<'t>)) {
        match self {
            Matcher::Plain(r) => {
                for caps in r.captures_iter(text) {
                    if let Some(m) = caps.get(0) {
                        each(m.start(), &caps);
                    }
                }
            }
            Matcher::Lifted { rest, max } => {
                let bytes = text.as_bytes();
                let mut at = 0;
                while at <= text.len() {
                    let Some(caps) = rest.captures_at(text, at) else {
                        break;
                    };
                    let Some(m) = caps.get(0) else { break };
                    let floor = at.max(m.start().saturating_sub(*max));
                    let mut start = m.start();
                    while start > floor && is_ident(bytes[start - 1]) {
                        start -= 1;
                    }
                    each(start, &caps);
                    // The rest is never empty (it begins with a keyword); guard anyway.
                    at = if m.end() > m.start() {
                        m.end()
                    } else {
                        m.end() + 1
                    };
                }
            }
        }
    }
}

#[derive(Debug)]
struct CompiledRule {
    id: Arc<str>,
    /// The pattern and allowlists as written, compiled on first use
    /// (Note \[Rules compiled when first needed\]).
    source: Rule,
    compiled: OnceLock<Option<RuleRegexes>>,
    /// The relaxed regex run before the rule is compiled (Note \[Relaxed
    /// gates\] in `gate.rs`); `None` inside when the rule is cheap as it is.
    gate: OnceLock<Option<regex_automata::meta::Regex>>,
    /// A gate written by hand for this rule's pattern (Note \[Hand gate\]
    /// in `hand_gate.rs`): run instead of the relaxed regex, and before the
    /// rule's own regex even once that is compiled.
    hand: Option<fn(&str) -> bool>,
    /// Whether the hand gate has a form read on JSON text as written (Note
    /// \[Hand gate as written\] in `hand_gate.rs`).
    hand_as_written: bool,
    /// Whether the rule's allowlists let a value of letters go whole (Note
    /// \[Values an allowlist takes whole\] in `hand_gate.rs`).
    letters_allowed: bool,
    secret_group: Option<usize>,
    entropy: Option<f64>,
    /// gitleaks drops a generic finding that a specific one overlaps.
    generic: bool,
    /// Literals every match holds (a built-in rule's, written at build
    /// time; Note \[Literals a match needs\] in `needs/mod.rs`).
    needs: &'static [&'static [needs::Literal]],
}

/// A rule's compiled regex and allowlists.
#[derive(Debug)]
struct RuleRegexes {
    regex: Matcher,
    /// Compiled with the regex for a user's rule; for a built-in one when
    /// it first finds a candidate (Note \[Rules compiled when first
    /// needed\]): most text wakes a rule's keywords without a match, and
    /// the generic rule's allowlists cost more to compile than its regex.
    allowlists: OnceLock<Vec<CompiledAllowlist>>,
}

impl RuleRegexes {
    /// The rule's allowlists, compiled now if need be (a built-in rule's
    /// compile: tested).
    fn allowlists(&self, rule: &Rule) -> &[CompiledAllowlist] {
        self.allowlists
            .get_or_init(|| rule.allowlists.iter().map(allowlist_later).collect())
    }
}

/// Note \[Rules compiled when first needed\]: compiling all ~220 built-in
/// patterns takes about 150 ms, which every short command (`parse` of one
/// file, `run --replay` of a small transcript) paid whole while most rules
/// never run: a rule's regex only runs when one of its keywords occurs. So
/// [`Detector::builtin`] compiles each rule the first time its keywords let
/// it run (a test compiles every built-in rule, so none can fail there);
/// [`Detector::new`], which takes the user's rules, compiles all of them at
/// once, so a bad user regex is an error when the file is loaded, never a
/// rule silently skipped later.
fn compile_rule(rule: &Rule, checked: bool) -> Result<RuleRegexes, SecretsError> {
    let regex = Matcher::new(&rule.id, &rule.regex, checked)?;
    if let Some(g) = rule.secret_group
        && g >= regex.regex().captures_len()
    {
        return Err(SecretsError::Rule {
            id: rule.id.clone(),
            message: format!(
                "secretGroup {g} but the regex has {} groups",
                regex.regex().captures_len() - 1
            ),
        });
    }
    Ok(RuleRegexes {
        regex,
        allowlists: OnceLock::new(),
    })
}

/// [`compile_rule`] with the allowlists compiled too (a user's rule: a bad
/// allowlist regex is an error when the file is loaded).
fn compile_rule_now(rule: &Rule) -> Result<RuleRegexes, SecretsError> {
    let compiled = compile_rule(rule, true)?;
    let allowlists = rule
        .allowlists
        .iter()
        .map(|a| compile_allowlist(&rule.id, a))
        .collect::<Result<_, _>>()?;
    let _ = compiled.allowlists.set(allowlists);
    Ok(compiled)
}

impl CompiledRule {
    /// The compiled regexes (compiling them now if need be); `None` only
    /// for a lazily compiled rule that does not compile, which the built-in
    /// set's test rules out.
    fn regexes(&self) -> Option<&RuleRegexes> {
        self.compiled
            .get_or_init(|| compile_rule(&self.source, false).ok())
            .as_ref()
    }

    /// False only when the rule cannot match `text`: a literal every match
    /// needs is missing (Note \[Literals a match needs\] in `needs/mod.rs`),
    /// or its relaxed regex (compiled now if need be) says so; a compiled
    /// rule is not gated by a regex (Note \[Relaxed gates\] in `gate.rs`).
    fn may_run(&self, text: &str) -> bool {
        if !needs::met(self.needs, text) {
            return false;
        }
        if let Some(hand) = self.hand {
            return hand(text);
        }
        if self.compiled.get().is_some() {
            return true;
        }
        let gate = self.gate.get_or_init(|| {
            let pattern = match lift(&self.source.regex) {
                Some((_, rest)) => format!("(?i){rest}"),
                None => self.source.regex.clone(),
            };
            let relaxed = gate::relax(&go_to_rust(&pattern))?;
            gate::compile(&relaxed)
        });
        gate.as_ref().is_none_or(|g| g.is_match(text))
    }
}

/// The rules of a [`RuleSet`] compiled into one matcher. Build once, share
/// (it is `Send + Sync`); [`Detector::builtin`] is built on first use.
#[derive(Debug)]
pub struct Detector {
    rules: Vec<CompiledRule>,
    /// The global allowlists as written, compiled when a first candidate
    /// needs them (Note \[Rules compiled when first needed\]): compiling
    /// them was a tenth of a short command's instructions (callgrind), and
    /// most processes never find a candidate. A user's set compiles them at
    /// once (a bad regex is an error when the file is loaded).
    allowlist_source: Vec<Allowlist>,
    allowlists: OnceLock<Vec<CompiledAllowlist>>,
    keywords: Option<Keywords>,
    /// Per keyword pattern: the rules it lets run.
    keyword_rules: Vec<Vec<usize>>,
    /// Per keyword pattern and rule it lets run (as `keyword_rules`), the
    /// requirement read at the keyword's hit (Note \[A requirement read at
    /// its keyword\] in `needs/mod.rs`).
    keyword_needs: Vec<Vec<Option<needs::AtKeyword>>>,
    /// Rules without keywords.
    always: Vec<usize>,
    /// Whether a keyword hit in JSON text as written is a hit in its strings
    /// (Note \[Clean JSON without a Value\] in `clean_json.rs`): every rule
    /// has keywords and none holds a byte JSON escapes (`"`, `\`, a control).
    json_raw_keywords: bool,
    /// Every keyword and every literal a rule needs is ASCII, so the
    /// keyword pass finds in bytes that are not UTF-8 what it finds in
    /// their lossy text (Note \[Clean bytes unchecked\] in `clean_json.rs`).
    ascii_only: bool,
}

/// The masks [`Masker`](super::Masker) writes, `[REDACTED:<rule>:<8 hex>]`
/// (`\[REDACTED:[A-Za-z0-9._-]+:[0-9a-f]{8}\]`); secrets are never found
/// inside them, which makes masking idempotent. Read by hand
/// ([`marker_end`]): compiling it as a regex was a tenth of what masking
/// added to a short command (callgrind).
const MARKER_OPEN: &[u8] = b"[REDACTED:";

/// Where the mask that opens at `text[at..]` (with [`MARKER_OPEN`]) ends, if
/// it is one: the rule id (`[A-Za-z0-9._-]+`), `:`, eight lower-case hex
/// digits, `]`. The id may itself hold no `:`, so its end is the last `:`
/// before the hex digits, as the regex reads it.
fn marker_end(text: &[u8], at: usize) -> Option<usize> {
    let id_start = at + MARKER_OPEN.len();
    let id_len = text
        .get(id_start..)?
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        .count();
    let colon = id_start + id_len;
    if id_len == 0 || text.get(colon) != Some(&b':') {
        return None;
    }
    let hex = text.get(colon + 1..colon + 9)?;
    (hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && text.get(colon + 9) == Some(&b']'))
    .then_some(colon + 10)
}

/// `pattern` (Rust syntax) for `is_match` alone, with the limits of
/// [`compile`]; `None` when it does not compile (then [`compile`] says why).
fn compile_is_match(pattern: &str) -> Option<regex_automata::meta::Regex> {
    gate::is_match_only(pattern, Some((64 << 20, 32 << 20)))
}

fn compile(id: &str, pattern: &str) -> Result<Regex, SecretsError> {
    RegexBuilder::new(&go_to_rust(pattern))
        // The generic rule's allowlist alternation is large.
        .size_limit(64 << 20)
        .dfa_size_limit(32 << 20)
        .build()
        .map_err(|e| SecretsError::Rule {
            id: id.to_owned(),
            message: format!("bad regex: {}", one_line(&e.to_string())),
        })
}

/// An allowlist with its regexes compiled now: a bad regex is an error
/// (the user's rules, checked when the file is loaded).
fn compile_allowlist(id: &str, a: &Allowlist) -> Result<CompiledAllowlist, SecretsError> {
    let out = allowlist_later(a);
    if let Some(r) = &out.regex {
        let compiled = compile_is_match(&r.pattern);
        if compiled.is_none() {
            // Name the one that fails (each compiled alone only then: the
            // allowlists cost more to compile than most rules).
            for one in &a.regexes {
                compile(id, one)?;
            }
            return Err(SecretsError::Rule {
                id: id.to_owned(),
                message: "the allowlist's regexes together are too large".to_owned(),
            });
        }
        let _ = r.compiled.set(compiled);
    }
    Ok(out)
}

/// An allowlist whose regexes compile when first needed (the built-in ones:
/// a test compiles every one of them).
fn allowlist_later(a: &Allowlist) -> CompiledAllowlist {
    let regex = (!a.regexes.is_empty()).then(|| AllowRegex {
        pattern: a
            .regexes
            .iter()
            .map(|r| format!("(?:{})", go_to_rust(r)))
            .collect::<Vec<_>>()
            .join("|"),
        compiled: OnceLock::new(),
    });
    // Note [Stopwords without an automaton] in `stopwords`.
    let stopwords = (!a.stopwords.is_empty()).then(|| Stopwords::new(&a.stopwords));
    CompiledAllowlist {
        and: a.condition.as_deref() == Some("AND"),
        target: match a.regex_target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        },
        regex,
        stopwords,
    }
}

impl CompiledAllowlist {
    /// The stopwords' answer for `secret`; `None` when there are none.
    fn stop(&self, secret: &str) -> Option<bool> {
        self.stopwords
            .as_ref()
            .map(|s| !secret.is_empty() && s.found_in(secret))
    }

    /// [`CompiledAllowlist::allows`], given the stopwords' answer `stop`,
    /// when that needs no regex compiled now; `None` when it does.
    fn decided(&self, stop: Option<bool>, secret: &str, matched: &str, line: &str) -> Option<bool> {
        let compiled = self
            .regex
            .as_ref()
            .is_none_or(|r| r.compiled.get().is_some());
        if compiled {
            return Some(self.allows(stop, secret, matched, line));
        }
        match (self.and, stop) {
            (false, Some(true)) => Some(true),
            (true, Some(false)) => Some(false),
            _ => None,
        }
    }

    /// gitleaks' `checkFindingAllowed` for one allowlist, given the
    /// stopwords' answer `stop` ([`CompiledAllowlist::stop`]): when that
    /// decides, the regexes are neither compiled nor run.
    fn allows(&self, stop: Option<bool>, secret: &str, matched: &str, line: &str) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        match (self.and, stop) {
            (false, Some(true)) => return true,
            (true, Some(false)) => return false,
            _ => {}
        }
        let regex = self
            .regex
            .as_ref()
            .map(|r| !target.is_empty() && r.is_match(target));
        if self.and {
            regex.unwrap_or(true) && stop.unwrap_or(true)
        } else {
            regex.unwrap_or(false) || stop.unwrap_or(false)
        }
    }
}

/// Shannon entropy of `s` in bits per character, as gitleaks computes it
/// (character counts over the byte length; the same for ASCII).
pub fn shannon_entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut ascii = [0u32; 128];
    let mut other: BTreeMap<char, u32> = BTreeMap::new();
    for c in s.chars() {
        if c.is_ascii() {
            ascii[c as usize] += 1;
        } else {
            *other.entry(c).or_default() += 1;
        }
    }
    let inv = 1.0 / s.len() as f64;
    ascii
        .iter()
        .chain(other.values())
        .filter(|&&n| n > 0)
        .map(|&n| {
            let p = f64::from(n) * inv;
            -p * p.log2()
        })
        .sum()
}

/// A candidate before overlaps are resolved.
struct Candidate {
    start: usize,
    end: usize,
    rule: usize,
    /// Found in a derived text (Note \[Derived texts\] in `encoded.rs`):
    /// loses a tie to a finding in the text as written.
    derived: bool,
}

impl Detector {
    /// Compiles a rule set.
    ///
    /// # Errors
    /// [`SecretsError::Rule`] naming the rule whose regex (or allowlist regex)
    /// does not compile or whose `secretGroup` the regex lacks.
    pub fn new(rules: &RuleSet) -> Result<Detector, SecretsError> {
        Detector::build(rules.clone(), false)
    }

    /// Compiles the keywords now and each rule now or, when `lazy`, when it
    /// first runs (Note \[Rules compiled when first needed\]).
    /// Takes the set by value: each rule moves into its compiled form
    /// (cloning ~220 rules was a tenth of a short command's masking cost).
    pub(super) fn build(rules: RuleSet, lazy: bool) -> Result<Detector, SecretsError> {
        let allowlists = OnceLock::new();
        if !lazy {
            let now = rules
                .allowlists
                .iter()
                .map(|a| compile_allowlist("allowlist", a))
                .collect::<Result<Vec<_>, _>>()?;
            let _ = allowlists.set(now);
        }
        let mut compiled = Vec::new();
        let mut keywords: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        let mut keyword_ids: std::collections::HashMap<String, usize> =
            std::collections::HashMap::new();
        let mut always = Vec::new();
        let RuleSet {
            rules: all,
            allowlists: allowlist_source,
            disabled,
        } = rules;
        // The built-in table is in file order: look there first.
        let mut next_needs = 0;
        for rule in all.into_iter().filter(|r| !disabled.contains(&r.id)) {
            let rule_needs = match needs::BUILTIN.get(next_needs) {
                Some(&(id, regex, n)) if id == rule.id && regex == rule.regex => {
                    next_needs += 1;
                    n
                }
                _ => needs::builtin(&rule.id, &rule.regex),
            };
            let compiled_now = OnceLock::new();
            if !lazy {
                let _ = compiled_now.set(Some(compile_rule_now(&rule)?));
            }
            let index = compiled.len();
            if rule.keywords.is_empty() {
                always.push(index);
            }
            for k in &rule.keywords {
                let k = k.to_ascii_lowercase();
                if let Some(&p) = keyword_ids.get(&k) {
                    keyword_rules[p].push(index);
                } else {
                    keyword_ids.insert(k.clone(), keywords.len());
                    keywords.push(k);
                    keyword_rules.push(vec![index]);
                }
            }
            compiled.push(CompiledRule {
                id: Arc::from(rule.id.as_str()),
                compiled: compiled_now,
                gate: OnceLock::new(),
                hand: hand_gate::for_rule(&rule),
                hand_as_written: hand_gate::has_as_written(&rule.regex),
                letters_allowed: hand_gate::letters_allowed(&rule),
                secret_group: rule.secret_group.filter(|&g| g > 0),
                entropy: rule.entropy.filter(|&e| e != 0.0),
                generic: rule.id.contains("generic"),
                needs: rule_needs,
                source: rule,
            });
        }
        let json_raw_keywords = always.is_empty()
            && !keywords.is_empty()
            && keywords
                .iter()
                .all(|k| k.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\'));
        let ascii_only = keywords.iter().all(|k| k.is_ascii())
            && compiled
                .iter()
                .flat_map(|r| r.needs.iter().copied().flatten())
                .all(|&(lit, _, _)| lit.is_ascii());
        let keyword_needs = keyword_rules
            .iter()
            .zip(&keywords)
            .map(|(rules, k)| {
                rules
                    .iter()
                    .map(|&r| needs::AtKeyword::of(compiled[r].needs, k.as_bytes()))
                    .collect()
            })
            .collect();
        let keywords = if keywords.is_empty() {
            None
        } else {
            let shapes: Vec<_> = keywords
                .iter()
                .zip(&keyword_rules)
                .map(|(k, rules)| keyword_shape(k, rules.iter().map(|&r| &compiled[r].source)))
                .collect();
            Some(Keywords::shaped(&keywords, &shapes))
        };
        Ok(Detector {
            rules: compiled,
            allowlist_source,
            allowlists,
            json_raw_keywords,
            ascii_only,
            keywords,
            keyword_rules,
            keyword_needs,
            always,
        })
    }

    /// The built-in rules, compiled on first use.
    ///
    /// # Panics
    /// Never in a released build: a test compiles the built-in rules.
    pub fn builtin() -> &'static Detector {
        static BUILTIN: OnceLock<Detector> = OnceLock::new();
        // A test compiles the built-in rules; failing here is a build defect.
        BUILTIN.get_or_init(|| {
            Detector::build(RuleSet::builtin(), true)
                .expect("built-in secret rules compile (tested)")
        })
    }

    /// A new built-in detector with nothing compiled yet, as a process
    /// starts with: for measuring a short command's masking cost
    /// (`benches/secrets.rs`); use [`Detector::builtin`] otherwise.
    ///
    /// # Panics
    /// Never in a released build: a test compiles the built-in rules.
    #[doc(hidden)]
    pub fn builtin_uncached() -> Detector {
        Detector::build(RuleSet::builtin(), true).expect("built-in secret rules compile (tested)")
    }

    /// The ids of the compiled rules, in order.
    pub fn rule_ids(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| &*r.id)
    }

    /// Which rules may hit `text`: those whose keywords occur, and those
    /// without keywords; their indices, in rule order.
    ///
    /// A list, not a flag per rule: this runs for every JSON string and
    /// object key masked, most wake no rule, and walking ~220 flags per call
    /// was an eighth of `extract --jsonl`'s time (perf). Nothing is
    /// allocated until a keyword occurs.
    fn candidates(&self, text: &str) -> Vec<usize> {
        let mut run = self.always.clone();
        if let Some(k) = &self.keywords {
            // Keywords seen, one bit each (allocated at the first hit).
            let mut seen: Vec<u64> = Vec::new();
            let mut left = k.len();
            k.scan(text.as_bytes(), |p, _, _| {
                if seen.is_empty() {
                    seen = vec![0; k.len().div_ceil(64)];
                }
                let (word, bit) = (p / 64, 1u64 << (p % 64));
                if seen[word] & bit == 0 {
                    seen[word] |= bit;
                    run.extend_from_slice(&self.keyword_rules[p]);
                    left -= 1;
                }
                left > 0
            });
        }
        if run.len() > 1 {
            run.sort_unstable();
            run.dedup();
        }
        run
    }

    /// Whether one of the rules' keywords occurs in `text`.
    pub fn has_keyword(&self, text: &str) -> bool {
        self.keywords
            .as_ref()
            .is_some_and(|k| k.any(text.as_bytes()))
    }

    /// The global allowlists, compiled now if need be (a test compiles the
    /// built-in ones, so none is dropped here).
    fn global_allowlists(&self) -> &[CompiledAllowlist] {
        self.allowlists
            .get_or_init(|| self.allowlist_source.iter().map(allowlist_later).collect())
    }

    /// A cheap superset of `!find(text).is_empty()`: a keyword occurs, a
    /// rule has none, or a window of an encoding may hide one (Note
    /// \[Derived texts\] in `encoded.rs`). No regex runs.
    pub(super) fn may_find(&self, text: &str) -> bool {
        !self.always.is_empty() || self.has_keyword(text) || encoded::may_derive(text)
    }

    /// Whether every keyword and needed literal is ASCII (Note \[Clean
    /// bytes unchecked\] in `clean_json.rs`).
    pub(super) fn ascii_only(&self) -> bool {
        self.ascii_only
    }

    /// Where in JSON text as written a string may hold a secret, as sorted,
    /// disjoint byte spans: each keyword hit and each place an encoding may
    /// start (`%`, `eyJ`, a base64 run that decodes to text). Every
    /// unescaped string that [`Detector::may_find`] would accept overlaps
    /// one of them; `None` when that cannot be said (a rule without
    /// keywords, a keyword JSON would escape), and the caller must read the
    /// strings one by one.
    ///
    /// With `as_written` (the text has no `\u` or `\/` escape), a keyword
    /// hit is left out when no rule it wakes can have what it needs
    /// anywhere in the text (Note \[Needs read on the line\] in
    /// `clean_json.rs`). `facts` are the text's (Note \[Line facts in one
    /// pass\] in `facts.rs`): the searches for what it lacks are skipped.
    pub(super) fn hot_spans(
        &self,
        json: &[u8],
        as_written: bool,
        facts: Facts,
    ) -> Option<Vec<(usize, usize)>> {
        // Merged as they come: keyword hits come in the order they start.
        fn add(spans: &mut Vec<(usize, usize)>, (s, e): (usize, usize)) {
            match spans.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => spans.push((s, e)),
            }
        }
        if !self.json_raw_keywords {
            return None;
        }
        let mut spans = Vec::new();
        if let Some(k) = &self.keywords {
            // Per rule, two bits per requirement (Note \[Literals a match
            // needs\]: at most three): read yet, and met somewhere. On the
            // stack for as many rules as the built-in set has (a block from
            // the heap per line with a hit was 1-2% of masking `extract
            // --jsonl`'s output).
            let mut may_inline = [0u8; MAY_INLINE];
            let mut may_heap: Vec<u8> = Vec::new();
            let may: &mut [u8] = if let Some(may) = may_inline.get_mut(..self.rules.len()) {
                may
            } else {
                may_heap.resize(self.rules.len(), 0);
                &mut may_heap
            };
            // Whether the text holds K or ſ (for the needs and the hand
            // gate), known from the facts, and the hand gate's last answer
            // (from, stop, yes) for keywords ending in `from..=stop` (Note
            // \[Hand gate as written\]).
            let folds = std::cell::Cell::new(Some(facts.folds));
            let mut gate_memo: Option<(usize, usize, bool, bool)> = None;
            // No keyword holds a `"`, so no hit runs past a string's quote.
            k.scan_in_order(json, |id, start, end| {
                let mut wakes = |rule: usize, at_keyword: Option<&needs::AtKeyword>| {
                    if !as_written {
                        return true;
                    }
                    let rule_needs = self.rules[rule].needs;
                    if let Some(a) = at_keyword {
                        if !a.met_at(rule_needs, json, start, &folds) {
                            return false;
                        }
                    }
                    rule_needs.iter().enumerate().all(|(i, choices)| {
                        if at_keyword.is_some_and(|a| a.req() == i) {
                            return true;
                        }
                        if i >= 4 {
                            return needs::choices_met(choices, json, true, &folds);
                        }
                        let (read, met) = (1u8 << (2 * i), 2u8 << (2 * i));
                        if may[rule] & read == 0 {
                            let yes = needs::choices_met(choices, json, true, &folds);
                            may[rule] |= read | if yes { met } else { 0 };
                        }
                        may[rule] & met != 0
                    })
                };
                let mut may_match = |rule: usize| {
                    if !as_written || !self.rules[rule].hand_as_written {
                        return true;
                    }
                    if needs::text_folds(json, &folds) {
                        return true;
                    }
                    let letters = self.rules[rule].letters_allowed;
                    match gate_memo {
                        Some((from, stop, l, yes))
                            if from <= end && end <= stop && l == letters =>
                        {
                            yes
                        }
                        _ => {
                            let stop = hand_gate::run_stop_as_written(json, end);
                            let yes = hand_gate::yes_at_as_written(json, stop, letters);
                            gate_memo = Some((end, stop, letters, yes));
                            yes
                        }
                    }
                };
                if self.keyword_rules[id]
                    .iter()
                    .zip(&self.keyword_needs[id])
                    .any(|(&r, at)| wakes(r, at.as_ref()) && may_match(r))
                {
                    add(&mut spans, (start, end));
                }
            });
        }
        let mut triggers = Vec::new();
        encoded::trigger_spans(json, facts.starts(), &mut triggers);
        if triggers.is_empty() {
            return Some(spans);
        }
        triggers.extend_from_slice(&spans);
        triggers.sort_unstable();
        let mut merged = Vec::with_capacity(triggers.len());
        for span in triggers {
            add(&mut merged, span);
        }
        Some(merged)
    }

    /// Whether any rule's regex matches `text` before entropy and most
    /// allowlists are checked: a cheap superset of `!find(text).is_empty()`
    /// (the generic rule's hand gate already lets go the values its letters
    /// allowlist takes whole, Note \[Values an allowlist takes whole\] in
    /// `hand_gate.rs`).
    pub fn may_match(&self, text: &str) -> bool {
        self.candidates(text).into_iter().any(|i| {
            let r = &self.rules[i];
            r.may_run(text) && r.regexes().is_some_and(|c| c.regex.regex().is_match(text))
        }) || !encoded::derive(text, &[]).is_empty()
    }

    /// The secrets in `text`: non-overlapping, in text order. Where two rules
    /// overlap, a specific rule wins over a generic one, then the longer secret.
    /// Text inside a mask (`[REDACTED:..]`) is never found. Secrets that are
    /// percent-encoded in a URL, base64-encoded, or in a JWT broken over
    /// lines are found too (Note \[Derived texts\] in `encoded.rs`).
    pub fn find(&self, text: &str) -> Vec<Finding> {
        if text.is_empty() {
            return Vec::new();
        }
        let markers = Self::markers(text);
        let mut found = self.find_plain(text, &markers);
        for d in encoded::derive(text, &markers) {
            let inner = self.find_plain(&d.text, &Self::markers(&d.text));
            let inner = self.resolve_candidates(inner);
            if d.whole.is_some() {
                // One mask over the whole run, named after its first secret.
                if let (Some(c), Some((start, end))) = (inner.first(), d.whole) {
                    found.push(Candidate {
                        start,
                        end,
                        rule: c.rule,
                        derived: true,
                    });
                }
                continue;
            }
            for c in inner {
                for (start, end) in d.original(c.start, c.end) {
                    found.push(Candidate {
                        start,
                        end,
                        rule: c.rule,
                        derived: true,
                    });
                }
            }
        }
        self.resolve(found)
    }

    /// The masks already in `text`.
    fn markers(text: &str) -> Vec<(usize, usize)> {
        // One searcher for the process: building one per call was 3% of
        // `extract --jsonl` (this runs for every string masked).
        static MASK: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
        let mask = MASK.get_or_init(|| memchr::memmem::Finder::new(MARKER_OPEN));
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(at) = mask.find(&bytes[from..]).map(|p| from + p) {
            match marker_end(bytes, at) {
                Some(end) => {
                    out.push((at, end));
                    from = end;
                }
                None => from = at + 1,
            }
        }
        out
    }

    /// The rules' candidates in `text` as written, unresolved.
    fn find_plain(&self, text: &str, markers: &[(usize, usize)]) -> Vec<Candidate> {
        let mut found = Vec::new();
        for index in self.candidates(text) {
            let rule = &self.rules[index];
            if !rule.may_run(text) {
                continue;
            }
            let Some(regexes) = rule.regexes() else {
                continue;
            };
            regexes.regex.for_each(text, |start, caps| {
                if let Some(c) = self.candidate(index, regexes, text, start, caps, markers) {
                    found.push(c);
                }
            });
        }
        found
    }

    /// One match of `rule` starting at `match_start`, checked: the secret
    /// group, entropy, allowlists, masks.
    fn candidate(
        &self,
        index: usize,
        regexes: &RuleRegexes,
        text: &str,
        match_start: usize,
        caps: &regex::Captures<'_>,
        markers: &[(usize, usize)],
    ) -> Option<Candidate> {
        let rule = self.rules.get(index)?;
        let match_end = caps.get(0)?.end();
        // gitleaks trims newlines off the match's ends.
        let whole = &text[match_start..match_end];
        let matched = whole.trim_matches('\n');
        if matched.is_empty() {
            return None;
        }
        let match_start = match_start + (whole.len() - whole.trim_start_matches('\n').len());
        let (start, end) = match rule.secret_group {
            Some(g) => caps.get(g).map(|s| (s.start(), s.end()))?,
            None => match caps.iter().skip(1).flatten().find(|g| !g.is_empty()) {
                Some(s) => (s.start(), s.end()),
                None => (match_start, match_start + matched.len()),
            },
        };
        let secret = &text[start..end];
        if secret.is_empty() {
            return None;
        }
        if rule
            .entropy
            .is_some_and(|min| shannon_entropy(secret) <= min)
        {
            return None;
        }
        let line_start = text[..match_start].rfind('\n').map_or(0, |p| p + 1);
        let match_end = match_start + matched.len();
        let line_end = text[match_end..]
            .find('\n')
            .map_or(text.len(), |p| match_end + p);
        let line = &text[line_start..line_end];
        // Any allowlist allowing is enough: first what is decided without
        // compiling a regex, then the regexes, the smallest first (a
        // candidate that `^[a-zA-Z_.-]+$` allows never compiles the
        // thirteen-way global alternation).
        // Each allowlist's stopwords are read once.
        let mut rest = Vec::new();
        for a in self
            .global_allowlists()
            .iter()
            .chain(regexes.allowlists(&rule.source))
        {
            let stop = a.stop(secret);
            match a.decided(stop, secret, matched, line) {
                Some(true) => return None,
                Some(false) => {}
                None => rest.push((a, stop)),
            }
        }
        rest.sort_by_key(|(a, _)| a.regex.as_ref().map_or(0, |r| r.pattern.len()));
        if rest
            .into_iter()
            .any(|(a, stop)| a.allows(stop, secret, matched, line))
        {
            return None;
        }
        if markers.iter().any(|&(ms, me)| start < me && ms < end) {
            return None;
        }
        Some(Candidate {
            start,
            end,
            rule: index,
            derived: false,
        })
    }

    /// Keeps non-overlapping candidates, specific rules before generic ones,
    /// then longer secrets, then those found as written, then earlier ones;
    /// returns them in text order.
    fn resolve_candidates(&self, mut found: Vec<Candidate>) -> Vec<Candidate> {
        if found.len() > 1 {
            found.sort_by_key(|c| {
                (
                    self.rules[c.rule].generic,
                    std::cmp::Reverse(c.end - c.start),
                    c.derived,
                    c.start,
                    c.rule,
                )
            });
        }
        // Accepted candidates by start.
        let mut taken: BTreeMap<usize, Candidate> = BTreeMap::new();
        for c in found {
            let before = taken.range(..c.end).next_back();
            if before.is_some_and(|(_, t)| t.end > c.start) {
                continue;
            }
            taken.insert(c.start, c);
        }
        taken.into_values().collect()
    }

    /// [`Detector::resolve_candidates`] as findings.
    fn resolve(&self, found: Vec<Candidate>) -> Vec<Finding> {
        self.resolve_candidates(found)
            .into_iter()
            .map(|c| Finding {
                rule: Arc::clone(&self.rules[c.rule].id),
                start: c.start,
                end: c.end,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Detector, MAY_INLINE, Matcher, RuleSet, compile, lift};

    /// `hot_spans` keeps the built-in rules' per-line bits on the stack.
    #[test]
    fn the_builtin_rules_fit_the_stack_bits() {
        assert!(Detector::builtin().rules.len() <= MAY_INLINE);
    }

    /// The hand-read masks are the ones the regex they replace finds.
    #[test]
    fn masks_are_read_as_the_marker_regex_reads_them() {
        let regex = compile("marker", r"\[REDACTED:[A-Za-z0-9._-]+:[0-9a-f]{8}\]").unwrap();
        for text in [
            "",
            "[REDACTED:",
            "[REDACTED:github-pat:d7c62658]",
            "a [REDACTED:github-pat:d7c62658] b [REDACTED:x:00000000]",
            "[REDACTED:github-pat:d7c6265]",
            "[REDACTED:github-pat:d7c626588]",
            "[REDACTED:github-pat:D7C62658]",
            "[REDACTED::d7c62658]",
            "[REDACTED:a:b:d7c62658]",
            "[REDACTED:[REDACTED:a.b_c-d:0123abcd]]",
            "[REDACTED:é:d7c62658] [REDACTED:ok:ffffffff]",
            "[REDACTED:aws-key:d7c62658][REDACTED:aws-key:d7c62658]",
            "[REDACTED:aws key:d7c62658]",
        ] {
            let want: Vec<(usize, usize)> = regex
                .find_iter(text)
                .map(|m| (m.start(), m.end()))
                .collect();
            assert_eq!(Detector::markers(text), want, "{text:?}");
        }
    }

    /// Every match (start, end, groups) as the plain regex finds it.
    fn plain(r: &regex::Regex, text: &str) -> Vec<Vec<Option<(usize, usize)>>> {
        r.captures_iter(text)
            .map(|c| c.iter().map(|g| g.map(|g| (g.start(), g.end()))).collect())
            .collect()
    }

    fn lifted(m: &Matcher, text: &str) -> Vec<Vec<Option<(usize, usize)>>> {
        let mut out = Vec::new();
        m.for_each(text, |start, c| {
            let mut groups: Vec<_> = c.iter().map(|g| g.map(|g| (g.start(), g.end()))).collect();
            groups[0] = groups[0].map(|(_, e)| (start, e));
            out.push(groups);
        });
        out
    }

    #[test]
    fn lifted_prefix_matches_like_the_whole_pattern() {
        let ordinary = include_str!("../../tests/fixtures/secrets/ordinary.txt");
        let planted = include_str!("../../tests/fixtures/secrets/planted.jsonl");
        let long = "a".repeat(70);
        let tricky = format!(
            "{long}_api_key = 'Zx8Qw3Er5Ty7Ui9Op1As'\nfoo.bar-baz.secret: \"Zx8Qw3Er5Ty7Ui9Op1As2Df\" x.token=key=Zx8Qw3Er5Ty7Ui9Op1As \
             é_secret=Zx8Qw3Er5Ty7Ui9Op1AsQ ..--__access_token => \"Zx8Qw3Er5Ty7Ui9Op1AsW\"keykeykey=Zx8Qw3Er5Ty7Ui9Op1AsE1\n\
             api=Zx8Qw3Er5Ty7Ui9Op1AsR2api=Zx8Qw3Er5Ty7Ui9Op1AsR3 {long}secret=Zx8Qw3Er5Ty7Ui9Op1AsT{long}"
        );
        let texts = [ordinary, planted, &tricky, &planted.replace("\\n", "\n")];
        let mut lifted_rules = 0;
        for rule in RuleSet::builtin().rules {
            if lift(&rule.regex).is_none() {
                continue;
            }
            lifted_rules += 1;
            let whole = compile(&rule.id, &rule.regex).unwrap();
            let m = Matcher::new(&rule.id, &rule.regex, true).unwrap();
            assert!(matches!(m, Matcher::Lifted { .. }));
            for text in texts {
                assert_eq!(lifted(&m, text), plain(&whole, text), "{}", rule.id);
            }
        }
        assert!(lifted_rules >= 90, "{lifted_rules}");
        // The generic rule's matches on the tricky text are not trivially empty.
        let generic = compile(
            "g",
            &RuleSet::builtin()
                .rules
                .iter()
                .find(|r| r.id == "generic-api-key")
                .unwrap()
                .regex,
        )
        .unwrap();
        assert!(plain(&generic, &tricky).len() >= 5);
    }

    #[test]
    fn prefix_is_not_lifted_over_a_top_level_alternation() {
        assert_eq!(
            lift(r"(?i)[\w.-]{0,50}?(?:key)=(\d+)"),
            Some((50, r"(?:key)=(\d+)"))
        );
        assert_eq!(lift(r"(?i)[\w.-]{0,50}?key|token"), None);
        assert_eq!(
            lift(r"(?i)[\w.-]{0,50}?key[|]\|(a|b)"),
            Some((50, r"key[|]\|(a|b)"))
        );
        assert_eq!(lift(r"[\w.-]{0,50}?key"), None);
    }
}
