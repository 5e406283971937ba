//! The store doctor: where a checkpoint store's bytes go (`du`), what can be dropped safely and
//! dropping it (`prune`), and whether new graph code can still read and resume the threads the
//! store holds (`check`). One job a file; every read goes through the store backend trait
//! (`store::Backend::scan_sizes` and friends), so SQLite and Postgres are one code path.

pub mod check;
pub mod du_text;
pub mod plan;
pub mod prune;
pub mod sizes;
pub mod when;

/// `*` any run of characters, `?` one character; everything else literal. A thread id pattern.
pub fn glob(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = s.chars().collect();
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Whether a namespace is one subgraph call's (`node:<task id>`, nested with `|`): its
/// checkpoints belong to the root checkpoint the call started from. A `checkpointer=True`
/// subgraph's namespace has no task id and outlives each call.
pub fn is_call_ns(ns: &str) -> bool {
    ns.contains(':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_ids() {
        assert!(glob("*", ""));
        assert!(glob("user-*", "user-42"));
        assert!(!glob("user-*", "admin-user-42"));
        assert!(glob("t?", "t1"));
        assert!(!glob("t?", "t12"));
        assert!(glob("*-tmp-*", "a-tmp-b"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
        assert!(glob("exact", "exact"));
    }
}
