//! Which state keys a Starlark function can see: a node or path function is handed the whole
//! state as a fresh dict (Python hands it the same dict object; Starlark values cannot cross
//! heaps, so superstep converts it per call). For a function whose state parameter is only ever
//! read as `state["k"]`, `state.get("k", ...)` or `"k" in state` with literal keys, the other keys
//! are unobservable, and converting them (an `add` list grows every step) is wasted work.
//!
//! The analysis is conservative by construction: the literal reads are found in the syntax tree,
//! then every occurrence of the parameter's name in the function's source text is counted
//! (strings and comments included). Only when the two agree — each occurrence is the parameter
//! itself or one of those reads — are the keys trusted; any other use (passing, iterating,
//! printing, returning, rebinding, shadowing, a mention in a string) falls back to the full dict.

use starlark::syntax::ast::{ArgumentP, AstExpr, AstLiteral, AstStmt, BinOp, ExprP, StmtP};
use starlark::syntax::AstModule;
use std::collections::HashMap;

/// Per top-level `def`: the state keys it reads, when that is all it does with its state.
pub fn state_reads(ast: &AstModule) -> HashMap<String, Vec<String>> {
    let mut out = HashMap::new();
    let top = ast.statement();
    let stmts: Vec<&AstStmt> = match &top.node {
        StmtP::Statements(xs) => xs.iter().collect(),
        _ => vec![top],
    };
    for s in stmts {
        let StmtP::Def(def) = &s.node else { continue };
        let Some(first) = def.params.first() else {
            continue;
        };
        let starlark::syntax::ast::ParameterP::Normal(name, _, _) = &first.node else {
            continue;
        };
        let param = name.ident.as_str();
        let mut keys = Vec::new();
        let mut reads = 0usize;
        stmt_reads(&def.body, param, &mut keys, &mut reads);
        let text = ast.file_span(s.span).source_span().to_string();
        if word_count(&text, param) == reads + 1 {
            keys.sort();
            keys.dedup();
            out.insert(def.name.ident.clone(), keys);
        }
    }
    out
}

/// Occurrences of `word` in `text` as a whole identifier.
fn word_count(text: &str, word: &str) -> usize {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word)
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back();
            let after = text[i + word.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
        .count()
}

fn stmt_reads(s: &AstStmt, p: &str, keys: &mut Vec<String>, reads: &mut usize) {
    let mut e = |x: &AstExpr| expr_reads(x, p, keys, reads);
    match &s.node {
        StmtP::Statements(xs) => xs.iter().for_each(|x| stmt_reads(x, p, keys, reads)),
        StmtP::Return(Some(x)) | StmtP::Expression(x) => e(x),
        StmtP::Assign(a) => e(&a.rhs),
        StmtP::AssignModify(_, _, x) => e(x),
        StmtP::If(c, t) => {
            e(c);
            stmt_reads(t, p, keys, reads);
        }
        StmtP::IfElse(c, branches) => {
            e(c);
            stmt_reads(&branches.0, p, keys, reads);
            stmt_reads(&branches.1, p, keys, reads);
        }
        StmtP::For(f) => {
            e(&f.over);
            stmt_reads(&f.body, p, keys, reads);
        }
        StmtP::Def(d) => stmt_reads(&d.body, p, keys, reads),
        // anything not walked only lowers `reads`, which turns the analysis off
        _ => {}
    }
}

fn is_param(x: &AstExpr, p: &str) -> bool {
    matches!(&x.node, ExprP::Identifier(i) if i.node.ident == p)
}

fn literal_str(x: &AstExpr) -> Option<&str> {
    match &x.node {
        ExprP::Literal(AstLiteral::String(s)) => Some(s.node.as_str()),
        _ => None,
    }
}

fn expr_reads(x: &AstExpr, p: &str, keys: &mut Vec<String>, reads: &mut usize) {
    match &x.node {
        // state["k"]
        ExprP::Index(pair) if is_param(&pair.0, p) => {
            if let Some(k) = literal_str(&pair.1) {
                keys.push(k.to_string());
                *reads += 1;
                return;
            }
        }
        // state.get("k", ...)
        ExprP::Call(f, args) => {
            if let ExprP::Dot(obj, attr) = &f.node {
                let first = args.args.first().map(|a| &a.node);
                if is_param(obj, p) && attr.node == "get" {
                    if let Some(ArgumentP::Positional(k)) = first {
                        if let Some(k) = literal_str(k) {
                            keys.push(k.to_string());
                            *reads += 1;
                            for a in &args.args[1..] {
                                expr_reads(a.node.expr(), p, keys, reads);
                            }
                            return;
                        }
                    }
                }
            }
        }
        // "k" in state, "k" not in state
        ExprP::Op(l, BinOp::In | BinOp::NotIn, r) if is_param(r, p) => {
            if let Some(k) = literal_str(l) {
                keys.push(k.to_string());
                *reads += 1;
                return;
            }
        }
        _ => {}
    }
    x.node.visit_expr(|c| expr_reads(c, p, keys, reads));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(src: &str) -> HashMap<String, Vec<String>> {
        let ast = AstModule::parse("t.star", src.to_string(), &crate::spec::dialect()).unwrap();
        state_reads(&ast)
    }

    #[test]
    fn literal_reads_are_collected() {
        let r = reads(
            "def count(state):\n    n = state[\"n\"] + 1\n    if \"limit\" in state and n < state.get(\"limit\", 3):\n        return {\"n\": n}\n    return {\"note\": f\"{state['note']}\"}\n",
        );
        assert_eq!(r["count"], vec!["limit", "n", "note"]);
    }

    #[test]
    fn any_other_use_of_the_state_turns_the_analysis_off() {
        for body in [
            "return state",
            "return helper(state)",
            "return {k: 1 for k in state}",
            "return len(state)",
            "print(state)\n    return state[\"n\"]",
            "k = \"n\"\n    return state[k]",
            "state = {}\n    return state[\"n\"]",
            "return [state[\"a\"] for state in [{}]]",
            "f = lambda state: state[\"a\"]\n    return f({})",
            "return state.keys()",
            "return state[\"a\"] # state",
            "return \"state\" + state[\"a\"]",
        ] {
            let src = format!("def f(state):\n    {body}\n");
            assert!(!reads(&src).contains_key("f"), "{body}");
        }
    }

    #[test]
    fn a_parameter_with_another_name_is_followed() {
        let r = reads(
            "def route(s):\n    return \"stop\" if s[\"n\"] >= s[\"limit\"] else \"again\"\n",
        );
        assert_eq!(r["route"], vec!["limit", "n"]);
    }
}
