//! Which parts of `self` a rule can see, and the CEL value of only those.
//!
//! Note [Projected binding]: binding `self` converted the whole instance into
//! CEL values before every evaluation, and the `cel` crate converts a map
//! value again (cloning its hash map) each time a loop variable's field is
//! read: 64 findings of the code-review schema cost about 90 plain
//! validations. The crate can bind a lazy `Val`, but that means
//! re-implementing CEL's equality, ordering, `in`, `size` and iteration over
//! JSON; instead each rule's AST is walked once at compile time for the
//! paths it can reach from `self` (`self.counts.blocker`, and through
//! comprehension variables `self.findings[*].severity`), and `self` is bound
//! to a copy holding only those members. The rule cannot tell the
//! difference: everything it observes is kept.
//!
//! - A path used as a value in any other way than selecting a field from it
//!   (compared, passed to a function, indexed with `[]`, `in`, `size()`,
//!   returned) is kept whole.
//! - The range of a comprehension (`all`, `exists`, `exists_one`, `map`,
//!   `filter`) keeps every element (lists) or every key (maps); an element
//!   keeps what the loop variable's uses reach. A two-variable comprehension
//!   keeps its range whole.
//! - Objects keep only the members a path names (a missing one stays
//!   missing, so `has()` and "no such key" errors are unchanged); an object
//!   iterated as a map keeps all its keys; anything else that is not an
//!   object or an iterated list is converted whole.
//! - A variable that shadows `self` or a comprehension variable hides it, as
//!   in CEL.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::common::ast::{ComprehensionExpr, EntryExpr, Expr, operators};
use cel::objects::{Key, Map};
use cel::{IdedExpr, Value as Cel};
use serde_json::Value;

use super::to_cel;

/// What a set of rules can reach under one place of the instance.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Reach {
    /// The value is used as a whole: convert it all.
    whole: bool,
    /// Named members reached by field selection.
    fields: BTreeMap<String, Reach>,
    /// Iterated: every element (or key) is kept, elements reach this.
    each: Option<Box<Reach>>,
}

impl Reach {
    /// What `rule` reaches from `self`.
    pub(crate) fn of(rule: &IdedExpr) -> Reach {
        let mut reach = Reach::default();
        let mut scope: Vec<(String, Option<Path>)> = vec![("self".into(), Some(Vec::new()))];
        visit(rule, &mut scope, &mut reach);
        reach
    }

    /// The union of two reaches.
    pub(crate) fn merge(&mut self, other: &Reach) {
        self.whole |= other.whole;
        for (k, r) in &other.fields {
            self.fields.entry(k.clone()).or_default().merge(r);
        }
        if let Some(e) = &other.each {
            self.each.get_or_insert_with(Box::default).merge(e);
        }
    }

    fn at(&mut self, path: &[Seg]) -> &mut Reach {
        let mut node = self;
        for seg in path {
            node = match seg {
                Seg::Field(f) => node.fields.entry(f.clone()).or_default(),
                Seg::Each => node.each.get_or_insert_with(Box::default),
            };
        }
        node
    }

    /// The CEL value of the parts of `v` this reach keeps.
    pub(crate) fn project(&self, v: &Value) -> Cel {
        if self.whole {
            return to_cel(v);
        }
        match v {
            Value::Object(m) => {
                let mut out = HashMap::new();
                if let Some(each) = &self.each {
                    for (k, member) in m {
                        // A member both iterated and named: keep it whole
                        // rather than merge two reaches per instance.
                        let cel = if self.fields.contains_key(k) {
                            to_cel(member)
                        } else {
                            each.project(member)
                        };
                        out.insert(Key::String(Arc::new(k.clone())), cel);
                    }
                } else {
                    for (k, r) in &self.fields {
                        if let Some(member) = m.get(k) {
                            out.insert(Key::String(Arc::new(k.clone())), r.project(member));
                        }
                    }
                }
                Cel::Map(Map { map: Arc::new(out) })
            }
            Value::Array(a) => match &self.each {
                Some(each) if self.fields.is_empty() => {
                    Cel::List(Arc::new(a.iter().map(|e| each.project(e)).collect()))
                }
                _ => to_cel(v),
            },
            _ => to_cel(v),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Field(String),
    Each,
}

type Path = Vec<Seg>;

/// The data path `e` denotes (`self.a.b`, `f.severity` with `f` bound to
/// `self.findings[*]`), or `None` when it is not a selection from data. A
/// `filter` over data denotes its range (its result holds some of the
/// range's elements, or keys, as they are); its condition is recorded.
fn data(e: &IdedExpr, scope: &mut Vec<(String, Option<Path>)>, reach: &mut Reach) -> Option<Path> {
    match &e.expr {
        Expr::Ident(name) => scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, p)| p.clone()),
        Expr::Select(sel) => {
            let mut p = data(&sel.operand, scope, reach)?;
            p.push(Seg::Field(sel.field.clone()));
            Some(p)
        }
        Expr::Comprehension(c) => {
            let cond = filter_condition(c)?;
            let p = data(&c.iter_range, scope, reach)?;
            reach.at(&p).each.get_or_insert_with(Box::default);
            let mut each = p.clone();
            each.push(Seg::Each);
            let depth = scope.len();
            scope.push((c.accu_var.clone(), None));
            scope.push((c.iter_var.clone(), Some(each)));
            visit(cond, scope, reach);
            scope.truncate(depth);
            Some(p)
        }
        _ => None,
    }
}

/// The condition of a comprehension shaped as the `filter` macro expands:
/// `[]`, then `cond ? @result + [x] : @result`, giving `@result`.
fn filter_condition(c: &ComprehensionExpr) -> Option<&IdedExpr> {
    let ident = |e: &IdedExpr, name: &str| matches!(&e.expr, Expr::Ident(n) if n == name);
    if c.iter_var2.is_some()
        || !matches!(&c.accu_init.expr, Expr::List(l) if l.elements.is_empty())
        || !ident(&c.result, &c.accu_var)
        || !matches!(c.loop_cond.expr, Expr::Literal(_))
    {
        return None;
    }
    let Expr::Call(step) = &c.loop_step.expr else {
        return None;
    };
    let [cond, add, keep] = step.args.as_slice() else {
        return None;
    };
    if step.func_name != operators::CONDITIONAL
        || step.target.is_some()
        || !ident(keep, &c.accu_var)
    {
        return None;
    }
    let Expr::Call(add) = &add.expr else {
        return None;
    };
    let appends = add.func_name == operators::ADD
        && add.target.is_none()
        && matches!(add.args.as_slice(), [acc, list] if ident(acc, &c.accu_var)
            && matches!(&list.expr, Expr::List(l)
                if matches!(l.elements.as_slice(), [x] if ident(x, &c.iter_var))));
    appends.then_some(cond)
}

/// Record what `e`, evaluated as a value, reaches.
fn visit(e: &IdedExpr, scope: &mut Vec<(String, Option<Path>)>, reach: &mut Reach) {
    if let Some(p) = data(e, scope, reach) {
        reach.at(&p).whole = true;
        return;
    }
    match &e.expr {
        Expr::Select(sel) => visit(&sel.operand, scope, reach),
        Expr::Call(call) => {
            // `size` sees how many elements or keys there are, not what
            // they hold.
            let sized = match (call.target.as_deref(), call.args.as_slice()) {
                (Some(t), []) | (None, [t]) if call.func_name == "size" => Some(t),
                _ => None,
            };
            if let Some(p) = sized.and_then(|t| data(t, scope, reach)) {
                reach.at(&p).each.get_or_insert_with(Box::default);
                return;
            }
            if let Some(t) = call.target.as_deref() {
                visit(t, scope, reach);
            }
            for a in &call.args {
                visit(a, scope, reach);
            }
        }
        Expr::Comprehension(c) => {
            let range = data(&c.iter_range, scope, reach);
            let bound = if let (Some(mut p), None) = (range, &c.iter_var2) {
                reach.at(&p).each.get_or_insert_with(Box::default);
                p.push(Seg::Each);
                Some(p)
            } else {
                visit(&c.iter_range, scope, reach);
                None
            };
            visit(&c.accu_init, scope, reach);
            let depth = scope.len();
            scope.push((c.accu_var.clone(), None));
            scope.push((c.iter_var.clone(), bound));
            if let Some(v2) = &c.iter_var2 {
                scope.push((v2.clone(), None));
            }
            for sub in [&c.loop_cond, &c.loop_step, &c.result] {
                visit(sub, scope, reach);
            }
            scope.truncate(depth);
        }
        Expr::List(l) => l.elements.iter().for_each(|x| visit(x, scope, reach)),
        Expr::Map(m) => m
            .entries
            .iter()
            .for_each(|en| entry(&en.expr, scope, reach)),
        Expr::Struct(st) => st
            .entries
            .iter()
            .for_each(|en| entry(&en.expr, scope, reach)),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn entry(en: &EntryExpr, scope: &mut Vec<(String, Option<Path>)>, reach: &mut Reach) {
    match en {
        EntryExpr::MapEntry(m) => {
            visit(&m.key, scope, reach);
            visit(&m.value, scope, reach);
        }
        EntryExpr::StructField(f) => visit(&f.value, scope, reach),
    }
}
