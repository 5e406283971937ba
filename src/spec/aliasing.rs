//! State aliasing (issue 12 item 6). LangGraph hands a node the channels' own value objects:
//! `state["items"].append(x)` or `state["meta"]["k"] = 2` changes the channel itself — no write,
//! no reducer, no version — and every later checkpoint stores the changed value. Starlark nodes
//! get converted copies, so the engine looks for such changes after each call and puts them
//! back into the channels (`TaskContext::mutated`).
//!
//! Comparing every list and dict handed to a function costs as much as converting it, so the
//! engine does it only for modules that can mutate anything at all: this module's syntactic
//! check (a mutating method call, an assignment to an index or attribute, an augmented
//! assignment) says whether they can.

use starlark::syntax::ast::{AssignTargetP, AstExpr, AstStmt, ExprP, StmtP};
use starlark::syntax::AstModule;

/// The list and dict methods that change their receiver.
pub const MUTATORS: [&str; 9] = [
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "clear",
    "update",
    "setdefault",
    "popitem",
];

/// Whether any code in the module can mutate a value in place.
pub fn may_mutate(ast: &AstModule) -> bool {
    stmt(ast.statement())
}

fn stmt(s: &AstStmt) -> bool {
    match &s.node {
        StmtP::Assign(a) if !matches!(a.lhs.node, AssignTargetP::Identifier(_)) => return true,
        StmtP::AssignModify(..) => return true,
        _ => {}
    }
    let mut found = false;
    s.node.visit_stmt(|c| found = found || stmt(c));
    s.node.visit_expr(|e| found = found || expr(e));
    found
}

fn expr(e: &AstExpr) -> bool {
    if let ExprP::Call(f, _) = &e.node {
        if let ExprP::Dot(_, name) = &f.node {
            if MUTATORS.contains(&name.node.as_str()) {
                return true;
            }
        }
    }
    let mut found = false;
    e.node.visit_expr(|c| found = found || expr(c));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &str) -> bool {
        let ast = AstModule::parse("t.star", src.to_string(), &crate::spec::dialect()).unwrap();
        may_mutate(&ast)
    }

    #[test]
    fn mutations_anywhere_are_seen_and_pure_code_is_not() {
        for src in [
            "def f(s):\n    s[\"items\"].append(1)\n",
            "def f(s):\n    s[\"meta\"][\"k\"] = 2\n",
            "def f(s):\n    x = s[\"items\"]\n    x += [1]\n",
            "def f(s):\n    return [v.update({}) for v in s[\"d\"]]\n",
            "def f(s):\n    g = lambda: s[\"l\"].pop()\n    return g()\n",
        ] {
            assert!(check(src), "{src}");
        }
        for src in [
            "def f(s):\n    return {\"items\": s[\"items\"] + [1]}\n",
            "def f(s):\n    x = dict(s[\"meta\"])\n    return {\"meta\": x}\n",
        ] {
            assert!(!check(src), "{src}");
        }
    }
}
