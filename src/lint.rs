//! `superstep lint GRAPH`: static checks of a spec's Starlark node code for the rules the
//! interrupt documents teach. A node re-executes from its first line when it is resumed, so
//! anything before an `interrupt()` runs again, and answers are matched to `interrupt()` calls by
//! position.
//!
//! | rule | finding |
//! |---|---|
//! | SS001 | a side effect (`effect`, `print`) can run before an `interrupt()` of the same node |
//! | SS002 | an `interrupt()` is reached only under a condition (or loop) that reads state or a nondeterministic helper |
//! | SS003 | an interrupt payload that cannot be serialised (a function, lambda or set) |
//! | SS004 | an interrupt payload computed above it from a nondeterministic helper (approval drift) |
//! | SS005 | the order or number of a node's interrupts can vary between executions |
//! | SS006 | a node changes the state it was given in place (`state["items"].append(x)`): in LangGraph that changes the channel itself, bypassing the reducer |

use crate::spec::dialect;
use serde::Serialize;
use starlark::syntax::ast::{AssignTargetP, AstExpr, AstStmt, ExprP, StmtP};
use starlark::syntax::AstModule;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Finding {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub rule: &'static str,
    pub node: String,
    pub message: String,
    pub fix: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {} [{}] {}\n    fix: {}",
            self.file, self.line, self.col, self.rule, self.node, self.message, self.fix
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Taint {
    /// Read from the node's state argument.
    State,
    /// From `random()`, `uuid4()`, `now()`, `llm()`.
    Nondet,
}

const NONDET: [&str; 4] = ["random", "uuid4", "now", "llm"];
const EFFECTS: [&str; 2] = ["effect", "print"];
const TERMINATORS: [&str; 2] = ["fail", "raise_error"];

type Taints = BTreeSet<Taint>;

/// Where an interrupt sits: the conditions / loops it depends on.
#[derive(Clone)]
struct Guard {
    taint: Taints,
    kind: &'static str,
    line: usize,
}

struct Func<'a> {
    ast: &'a AstModule,
    file: String,
    node: String,
    defs: BTreeSet<String>,
    vars: HashMap<String, Taints>,
    guards: Vec<Guard>,
    /// Guards from earlier early exits (`if c: return/fail`) that still hold.
    sticky: Vec<Guard>,
    effects: Vec<(usize, usize)>,
    out: Vec<Finding>,
}

fn callee(e: &AstExpr) -> Option<&str> {
    match &e.node {
        ExprP::Call(f, _) => match &f.node {
            ExprP::Identifier(id) => Some(id.node.ident.as_str()),
            _ => None,
        },
        _ => None,
    }
}

fn terminates(s: &AstStmt) -> bool {
    match &s.node {
        StmtP::Return(_) => true,
        StmtP::Expression(e) => callee(e).is_some_and(|c| TERMINATORS.contains(&c)),
        StmtP::Statements(v) => v.last().is_some_and(terminates),
        StmtP::IfElse(_, b) => terminates(&b.0) && terminates(&b.1),
        _ => false,
    }
}

fn contains_interrupt(s: &AstStmt) -> usize {
    let mut n = 0;
    fn expr(e: &AstExpr, n: &mut usize) {
        if callee(e) == Some("interrupt") {
            *n += 1;
        }
        e.node.visit_expr(|c| expr(c, n));
    }
    fn stmt(s: &AstStmt, n: &mut usize) {
        match &s.node {
            StmtP::Statements(v) => v.iter().for_each(|x| stmt(x, n)),
            StmtP::If(c, b) => {
                expr(c, n);
                stmt(b, n)
            }
            StmtP::IfElse(c, b) => {
                expr(c, n);
                stmt(&b.0, n);
                stmt(&b.1, n)
            }
            StmtP::For(f) => {
                expr(&f.over, n);
                stmt(&f.body, n)
            }
            StmtP::Def(_) => {}
            other => other.visit_expr(|e| expr(e, n)),
        }
    }
    stmt(s, &mut n);
    n
}

impl Func<'_> {
    fn pos(&self, span: starlark::codemap::Span) -> (usize, usize) {
        let r = self.ast.file_span(span).resolve_span();
        (r.begin.line + 1, r.begin.column + 1)
    }

    fn push(
        &mut self,
        (line, col): (usize, usize),
        rule: &'static str,
        message: String,
        fix: &str,
    ) {
        self.out.push(Finding {
            file: self.file.clone(),
            line,
            col,
            rule,
            node: self.node.clone(),
            message,
            fix: fix.to_string(),
        });
    }

    /// Taint of an expression (and checks on the calls inside it, in evaluation order).
    fn expr(&mut self, e: &AstExpr) -> Taints {
        let mut t = Taints::new();
        match &e.node {
            ExprP::Identifier(id) => {
                if let Some(v) = self.vars.get(&id.node.ident) {
                    t.extend(v.iter().copied());
                }
            }
            ExprP::Call(f, args) => {
                let name = match &f.node {
                    ExprP::Identifier(id) => Some(id.node.ident.clone()),
                    _ => None,
                };
                let mut arg_taint = Taints::new();
                for a in &args.args {
                    arg_taint.extend(self.expr(a.expr()));
                }
                if !matches!(&f.node, ExprP::Identifier(_)) {
                    arg_taint.extend(self.expr(f));
                }
                match name.as_deref() {
                    Some(n) if NONDET.contains(&n) => {
                        t.insert(Taint::Nondet);
                    }
                    Some(n) if EFFECTS.contains(&n) => {
                        let p = self.pos(e.span);
                        self.effects.push(p);
                    }
                    Some("interrupt") => self.interrupt(e, args, &arg_taint),
                    _ => {}
                }
                // a method call on tainted data (state.get(...), x.strip()) stays tainted
                t.extend(arg_taint);
            }
            _ => {
                let mut parts = Vec::new();
                e.node.visit_expr(|c| parts.push(c));
                for c in parts {
                    t.extend(self.expr(c));
                }
            }
        }
        t
    }

    fn interrupt(
        &mut self,
        e: &AstExpr,
        args: &starlark::syntax::ast::CallArgsP<starlark::syntax::ast::AstNoPayload>,
        payload: &Taints,
    ) {
        let p = self.pos(e.span);
        for (line, col) in std::mem::take(&mut self.effects) {
            self.push(
                (line, col),
                "SS001",
                format!(
                    "side effect before interrupt() (line {}): the node re-runs from its first line on resume, so this effect runs again",
                    p.0
                ),
                "move the effect after the interrupt() call, or into a node of its own after this one",
            );
        }
        if let Some(g) = self
            .guards
            .iter()
            .chain(self.sticky.iter())
            .find(|g| !g.taint.is_empty())
        {
            let what = if g.taint.contains(&Taint::Nondet) {
                "a nondeterministic helper"
            } else {
                "the state"
            };
            self.push(
                p,
                "SS002",
                format!(
                    "interrupt() is reached only through the {} on line {} that reads {what}: if that changes between executions, answers are matched to the wrong interrupt() by position",
                    g.kind, g.line
                ),
                "make the interrupt unconditional, or decide the condition in a preceding node and route with an edge",
            );
        }
        if payload.contains(&Taint::Nondet) {
            self.push(
                p,
                "SS004",
                "the interrupt payload is computed above it from a nondeterministic helper: on resume it is regenerated, so what runs is not what the human approved".into(),
                "compute the payload in a preceding node (state is replayed, not regenerated) and read it from state here",
            );
        }
        if let Some(a) = args.args.first() {
            if let Some(bad) = self.unserialisable(a.expr()) {
                self.push(
                    p,
                    "SS003",
                    format!("the interrupt payload contains {bad}, which cannot be stored in the checkpoint"),
                    "pass plain data (str, number, bool, None, list, dict) and describe functions by name",
                );
            }
        }
    }

    fn unserialisable(&self, e: &AstExpr) -> Option<String> {
        match &e.node {
            ExprP::Lambda(_) => Some("a lambda".into()),
            ExprP::Identifier(id) if self.defs.contains(&id.node.ident) => {
                Some(format!("the function {}", id.node.ident))
            }
            ExprP::Identifier(id)
                if ["len", "str", "int", "print", "range", "sorted"]
                    .contains(&id.node.ident.as_str()) =>
            {
                Some(format!("the builtin function {}", id.node.ident))
            }
            ExprP::Call(f, _) if matches!(&f.node, ExprP::Identifier(id) if id.node.ident == "set") => {
                Some("a set".into())
            }
            _ => {
                let mut found = None;
                e.node.visit_expr(|c| {
                    if found.is_none() && !matches!(&e.node, ExprP::Call(..)) {
                        found = self.unserialisable(c);
                    }
                });
                if let ExprP::Call(_, args) = &e.node {
                    for a in &args.args {
                        if found.is_none() {
                            found = self.unserialisable(a.expr());
                        }
                    }
                }
                found
            }
        }
    }

    fn assign(
        &mut self,
        lhs: &starlark::syntax::ast::AstAssignTargetP<starlark::syntax::ast::AstNoPayload>,
        t: &Taints,
    ) {
        match &lhs.node {
            AssignTargetP::Identifier(id) => {
                self.vars.insert(id.node.ident.clone(), t.clone());
            }
            AssignTargetP::Tuple(items) => items.iter().for_each(|x| self.assign(x, t)),
            AssignTargetP::Index(b) => {
                if let ExprP::Identifier(id) = &b.0.node {
                    self.vars
                        .entry(id.node.ident.clone())
                        .or_default()
                        .extend(t.iter().copied());
                }
            }
            AssignTargetP::Dot(..) => {}
        }
    }

    fn stmt(&mut self, s: &AstStmt) {
        match &s.node {
            StmtP::Statements(v) => v.iter().for_each(|x| self.stmt(x)),
            StmtP::Expression(e) | StmtP::Return(Some(e)) => {
                self.expr(e);
            }
            StmtP::Assign(a) => {
                let t = self.expr(&a.rhs);
                self.assign(&a.lhs, &t);
            }
            StmtP::AssignModify(lhs, _, rhs) => {
                let t = self.expr(rhs);
                self.assign(lhs, &t);
            }
            StmtP::If(c, body) => {
                let t = self.expr(c);
                let line = self.pos(c.span).0;
                self.branch(t.clone(), "if", line, body);
                if terminates(body) {
                    // what follows runs only when the condition was false
                    self.sticky.push(Guard {
                        taint: t,
                        kind: "early exit",
                        line,
                    });
                }
            }
            StmtP::IfElse(c, b) => {
                let t = self.expr(c);
                let line = self.pos(c.span).0;
                let (n_then, n_else) = (contains_interrupt(&b.0), contains_interrupt(&b.1));
                if !t.is_empty() && (n_then > 0 || n_else > 0) && n_then != n_else {
                    let p = self.pos(c.span);
                    self.push(
                        p,
                        "SS005",
                        format!(
                            "the branches of this if ({n_then} vs {n_else} interrupt() calls) depend on {}: the number and order of interrupts can differ between executions",
                            if t.contains(&Taint::Nondet) { "a nondeterministic helper" } else { "the state" }
                        ),
                        "ask the same questions in the same order on every path, or split the paths into separate nodes",
                    );
                }
                self.branch(t.clone(), "if", line, &b.0);
                self.branch(t, "else", line, &b.1);
            }
            StmtP::For(f) => {
                let t = self.expr(&f.over);
                let line = self.pos(f.over.span).0;
                self.assign(&f.var, &t);
                if !t.is_empty() && contains_interrupt(&f.body) > 0 {
                    let p = self.pos(f.over.span);
                    self.push(
                        p,
                        "SS005",
                        "interrupt() inside a loop over data from the state or a nondeterministic helper: the number and order of interrupts follow that data".into(),
                        "loop over a fixed range, or collect the answers in one interrupt() with a list payload",
                    );
                }
                self.branch(t, "loop", line, &f.body);
            }
            _ => {}
        }
    }

    fn branch(&mut self, taint: Taints, kind: &'static str, line: usize, body: &AstStmt) {
        self.guards.push(Guard { taint, kind, line });
        let effects_before = self.effects.clone();
        let sticky = self.sticky.len();
        self.stmt(body);
        self.sticky.truncate(sticky);
        self.guards.pop();
        if terminates(body) {
            // effects in a branch that returns cannot precede a later interrupt
            self.effects = effects_before;
        }
    }
}

/// SS006: in-place changes to the state a node was given. LangGraph hands a node the channels'
/// own objects, so `state["items"].append(x)`, `state["meta"]["k"] = 2`, `items += [x]` on an
/// alias change the channel without a write: no reducer runs, no version moves, and every later
/// checkpoint stores the change (superstep reproduces this; see `spec::aliasing`).
struct Aliasing<'a, 'o> {
    ast: &'a AstModule,
    file: &'a str,
    node: &'a str,
    param: &'a str,
    /// Local names bound to a value taken from the state (`items = state["items"]`, a loop
    /// variable over one).
    aliases: BTreeSet<String>,
    out: &'o mut Vec<Finding>,
}

impl Aliasing<'_, '_> {
    /// Whether `e` is a value inside the state (not the state dict itself, which is a fresh dict).
    fn value(&self, e: &AstExpr) -> bool {
        match &e.node {
            ExprP::Index(pair) => self.is_param(&pair.0) || self.value(&pair.0),
            ExprP::Call(f, _) => matches!(&f.node, ExprP::Dot(obj, m)
                if m.node == "get" && (self.is_param(obj) || self.value(obj))),
            ExprP::Identifier(id) => self.aliases.contains(&id.node.ident),
            _ => false,
        }
    }

    fn is_param(&self, e: &AstExpr) -> bool {
        matches!(&e.node, ExprP::Identifier(id) if id.node.ident == self.param)
    }

    fn push(&mut self, span: starlark::codemap::Span, what: String) {
        let r = self.ast.file_span(span).resolve_span();
        self.out.push(Finding {
            file: self.file.to_string(),
            line: r.begin.line + 1,
            col: r.begin.column + 1,
            rule: "SS006",
            node: self.node.to_string(),
            message: format!(
                "{what} changes the state in place: LangGraph handed the node the channel's own object, so this changes the channel without a write — no reducer runs, no version moves, nothing triggers — and every later checkpoint stores it"
            ),
            fix: "return the new value instead (`return {\"items\": state[\"items\"] + [x]}`), or change a copy (`items = list(state[\"items\"])`)".into(),
        });
    }

    fn snippet(&self, span: starlark::codemap::Span) -> String {
        let t = self.ast.file_span(span).source_span().to_string();
        let t = t.lines().next().unwrap_or_default().trim().to_string();
        format!("`{}`", crate::text::cut(&t, 60))
    }

    fn expr(&mut self, e: &AstExpr) {
        if let ExprP::Call(f, _) = &e.node {
            if let ExprP::Dot(obj, m) = &f.node {
                if crate::spec::aliasing::MUTATORS.contains(&m.node.as_str()) && self.value(obj) {
                    let what = self.snippet(e.span);
                    self.push(e.span, what);
                }
            }
        }
        e.node.visit_expr(|c| self.expr(c));
    }

    fn target(
        &mut self,
        lhs: &starlark::syntax::ast::AstAssignTargetP<starlark::syntax::ast::AstNoPayload>,
        augmented: bool,
        stmt: starlark::codemap::Span,
    ) {
        match &lhs.node {
            // `state["k"] = v` rebinds a key of the fresh dict: harmless; one level deeper (or
            // `state["k"] += [...]`, which extends the list in place) is not
            AssignTargetP::Index(b) if self.value(&b.0) || (augmented && self.is_param(&b.0)) => {
                let what = self.snippet(stmt);
                self.push(lhs.span, what);
            }
            AssignTargetP::Dot(obj, _) if self.value(obj) => {
                let what = self.snippet(stmt);
                self.push(lhs.span, what);
            }
            AssignTargetP::Identifier(id) if augmented && self.aliases.contains(&id.node.ident) => {
                let what = self.snippet(stmt);
                self.push(lhs.span, what);
            }
            AssignTargetP::Tuple(items) => {
                items.iter().for_each(|x| self.target(x, augmented, stmt))
            }
            _ => {}
        }
    }

    fn stmt(&mut self, s: &AstStmt) {
        match &s.node {
            StmtP::Assign(a) => {
                self.expr(&a.rhs);
                self.target(&a.lhs, false, s.span);
                if let AssignTargetP::Identifier(id) = &a.lhs.node {
                    if self.value(&a.rhs) {
                        self.aliases.insert(id.node.ident.clone());
                    } else {
                        self.aliases.remove(&id.node.ident);
                    }
                }
            }
            StmtP::AssignModify(lhs, _, rhs) => {
                self.expr(rhs);
                self.target(lhs, true, s.span);
            }
            StmtP::For(f) => {
                self.expr(&f.over);
                // iterating a state value, or a literal list holding one, binds its items
                let over = match &f.over.node {
                    ExprP::List(xs) | ExprP::Tuple(xs) => xs.iter().any(|x| self.value(x)),
                    _ => self.value(&f.over),
                };
                if let AssignTargetP::Identifier(id) = &f.var.node {
                    if over {
                        self.aliases.insert(id.node.ident.clone());
                    }
                }
                self.stmt(&f.body);
            }
            StmtP::Statements(v) => v.iter().for_each(|x| self.stmt(x)),
            StmtP::If(c, body) => {
                self.expr(c);
                self.stmt(body);
            }
            StmtP::IfElse(c, b) => {
                self.expr(c);
                self.stmt(&b.0);
                self.stmt(&b.1);
            }
            StmtP::Expression(e) | StmtP::Return(Some(e)) => self.expr(e),
            // a nested def has its own state parameter, if any
            _ => {}
        }
    }
}

/// Lint Starlark source for the given node functions.
pub fn lint_source(
    file: &str,
    source: &str,
    nodes: &[(String, String)],
) -> Result<Vec<Finding>, String> {
    let ast = AstModule::parse(file, source.to_owned(), &dialect())
        .map_err(|e| crate::engine::starlark::format_error(&e))?;
    let mut defs = BTreeSet::new();
    let mut bodies = Vec::new();
    fn collect<'a>(s: &'a AstStmt, defs: &mut BTreeSet<String>, bodies: &mut Vec<&'a AstStmt>) {
        match &s.node {
            StmtP::Statements(v) => v.iter().for_each(|x| collect(x, defs, bodies)),
            StmtP::Def(_) => {
                if let StmtP::Def(d) = &s.node {
                    defs.insert(d.name.node.ident.clone());
                }
                bodies.push(s);
            }
            _ => {}
        }
    }
    collect(ast.statement(), &mut defs, &mut bodies);
    let mut out = Vec::new();
    for (node, func) in nodes {
        let Some(def) = bodies.iter().find_map(|s| match &s.node {
            StmtP::Def(d) if d.name.node.ident == *func => Some(d),
            _ => None,
        }) else {
            continue;
        };
        let mut f = Func {
            ast: &ast,
            file: file.to_string(),
            node: node.clone(),
            defs: defs.clone(),
            vars: HashMap::new(),
            guards: Vec::new(),
            sticky: Vec::new(),
            effects: Vec::new(),
            out: Vec::new(),
        };
        if let Some(p) = def.params.first().and_then(|p| p.node.ident()) {
            f.vars
                .insert(p.node.ident.clone(), [Taint::State].into_iter().collect());
        }
        f.stmt(&def.body);
        out.extend(f.out);
        if let Some(p) = def.params.first().and_then(|p| p.node.ident()) {
            let mut a = Aliasing {
                ast: &ast,
                file,
                node,
                param: p.node.ident.as_str(),
                aliases: BTreeSet::new(),
                out: &mut out,
            };
            a.stmt(&def.body);
        }
    }
    out.sort_by(|a, b| (a.line, a.col, a.rule).cmp(&(b.line, b.col, b.rule)));
    out.dedup();
    Ok(out)
}
