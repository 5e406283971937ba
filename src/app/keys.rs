//! Key notation shared by `--keys` and the keymap table: single characters, `<Enter>`, `<Esc>`,
//! `<Tab>`, `<S-Tab>`, `<Up>`, `<Down>`, `<Left>`, `<Right>`, `<BS>`, `<Del>`, `<Home>`, `<End>`,
//! `<PageUp>`, `<PageDown>`, `<Space>`, `<lt>` (a literal `<`), `<C-x>` (Ctrl+x). Whitespace
//! separates tokens and is otherwise ignored (type a space with `<Space>`); `3n` is `3` then `n`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A parse error, worded for the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyError(pub String);

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

const NAMES: &str =
    "Enter Esc Tab S-Tab Up Down Left Right BS Del Home End PageUp PageDown Space lt C-<char>";

fn named(name: &str) -> Option<KeyEvent> {
    let k = |c: KeyCode| Some(KeyEvent::new(c, KeyModifiers::NONE));
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "enter" | "cr" | "return" => k(KeyCode::Enter),
        "esc" | "escape" => k(KeyCode::Esc),
        "tab" => k(KeyCode::Tab),
        "s-tab" | "backtab" => Some(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)),
        "up" => k(KeyCode::Up),
        "down" => k(KeyCode::Down),
        "left" => k(KeyCode::Left),
        "right" => k(KeyCode::Right),
        "bs" | "backspace" => k(KeyCode::Backspace),
        "del" | "delete" => k(KeyCode::Delete),
        "home" => k(KeyCode::Home),
        "end" => k(KeyCode::End),
        "pageup" | "pgup" => k(KeyCode::PageUp),
        "pagedown" | "pgdn" => k(KeyCode::PageDown),
        "space" => k(KeyCode::Char(' ')),
        "lt" => k(KeyCode::Char('<')),
        _ => {
            let rest = lower.strip_prefix("c-")?;
            let mut cs = rest.chars();
            let c = cs.next()?;
            if cs.next().is_some() {
                return None;
            }
            Some(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
        }
    }
}

/// Parse a key sequence like `"3n r true<Enter> <C-c>"`.
pub fn parse_keys(s: &str) -> Result<Vec<KeyEvent>, KeyError> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '<' {
            let Some(len) = chars[i + 1..].iter().position(|&x| x == '>') else {
                return Err(KeyError(format!(
                    "--keys: unclosed '<' at character {} of {s:?} (write a literal '<' as <lt>)",
                    i + 1
                )));
            };
            let name: String = chars[i + 1..i + 1 + len].iter().collect();
            let Some(k) = named(&name) else {
                return Err(KeyError(format!(
                    "--keys: unknown key <{name}> at character {} (known: {NAMES})",
                    i + 1
                )));
            };
            out.push(k);
            i += len + 2;
            continue;
        }
        let mods = if c.is_ascii_uppercase() {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        out.push(KeyEvent::new(KeyCode::Char(c), mods));
        i += 1;
    }
    Ok(out)
}

/// One key in the `--keys` notation: `parse_keys` reads it back as the same key, so a session's
/// keys can be written out and replayed.
pub fn notation(k: &KeyEvent) -> String {
    let name = match k.code {
        KeyCode::Enter => "Enter",
        KeyCode::Esc => "Esc",
        KeyCode::Tab => "Tab",
        KeyCode::BackTab => "S-Tab",
        KeyCode::Up => "Up",
        KeyCode::Down => "Down",
        KeyCode::Left => "Left",
        KeyCode::Right => "Right",
        KeyCode::Backspace => "BS",
        KeyCode::Delete => "Del",
        KeyCode::Home => "Home",
        KeyCode::End => "End",
        KeyCode::PageUp => "PageUp",
        KeyCode::PageDown => "PageDown",
        KeyCode::Char(c) if k.modifiers.contains(KeyModifiers::CONTROL) => {
            return format!("<C-{c}>")
        }
        KeyCode::Char(' ') => "Space",
        KeyCode::Char('<') => "lt",
        KeyCode::Char(c) => return c.to_string(),
        _ => return label(k),
    };
    format!("<{name}>")
}

/// One key as help and the footer show it (arrows and ⌫ as glyphs; see [`notation`] for the
/// `--keys` form).
pub fn label(k: &KeyEvent) -> String {
    let base = match k.code {
        KeyCode::Enter => "Enter".to_string(),
        KeyCode::Esc => "Esc".to_string(),
        KeyCode::Tab => "Tab".to_string(),
        KeyCode::BackTab => "S-Tab".to_string(),
        KeyCode::Up => "↑".to_string(),
        KeyCode::Down => "↓".to_string(),
        KeyCode::Left => "←".to_string(),
        KeyCode::Right => "→".to_string(),
        KeyCode::Backspace => "⌫".to_string(),
        KeyCode::Delete => "Del".to_string(),
        KeyCode::Home => "Home".to_string(),
        KeyCode::End => "End".to_string(),
        KeyCode::PageUp => "PgUp".to_string(),
        KeyCode::PageDown => "PgDn".to_string(),
        KeyCode::Char(' ') => "Space".to_string(),
        KeyCode::Char(c) => c.to_string(),
        other => format!("{other:?}"),
    };
    if k.modifiers.contains(KeyModifiers::CONTROL) {
        format!("C-{base}")
    } else {
        base
    }
}

/// Whether two key events are the same key (Shift is implied by an upper-case character).
pub fn same_key(a: &KeyEvent, b: &KeyEvent) -> bool {
    let norm = |k: &KeyEvent| {
        let mut m = k.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
        if let KeyCode::BackTab = k.code {
            m = KeyModifiers::NONE;
        }
        (k.code, m)
    };
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chars_names_counts_and_ctrl() {
        let ks = parse_keys("3n <Enter>r\"x\" <C-c><lt>").unwrap();
        let labels: Vec<String> = ks.iter().map(label).collect();
        assert_eq!(
            labels,
            ["3", "n", "Enter", "r", "\"", "x", "\"", "C-c", "<"]
        );
    }

    /// Found by the `keys` fuzz target (crash input `<BS>`: its label ⌫ is not notation).
    #[test]
    fn notation_parses_back_to_the_same_key() {
        let all = "<Enter><Esc><Tab><S-Tab><Up><Down><Left><Right><BS><Del><Home><End><PageUp><PageDown><Space><lt><C-c><C-x>aZ9>é";
        for k in parse_keys(all).unwrap() {
            let n = notation(&k);
            let back = parse_keys(&n).unwrap();
            assert_eq!(back.len(), 1, "{n}");
            assert!(same_key(&back[0], &k), "{n}");
        }
    }

    #[test]
    fn bad_sequences_are_clear_errors() {
        let e = parse_keys("n <Entr>").unwrap_err();
        assert!(e.0.contains("unknown key <Entr> at character 3"), "{e}");
        let e = parse_keys("n <Enter").unwrap_err();
        assert!(e.0.contains("unclosed '<'"), "{e}");
        assert!(parse_keys("   ").unwrap().is_empty());
    }

    #[test]
    fn shift_is_implied_by_case() {
        let a = KeyEvent::new(KeyCode::Char('B'), KeyModifiers::SHIFT);
        let b = KeyEvent::new(KeyCode::Char('B'), KeyModifiers::NONE);
        assert!(same_key(&a, &b));
        let c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert!(!same_key(
            &c,
            &KeyEvent::new(KeyCode::Char('c'), KeyModifiers::NONE)
        ));
    }
}
