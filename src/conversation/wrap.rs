//! Wrapping text by display width (a CJK character or an emoji takes two columns), never by
//! bytes; escaping what comes from a DB before it is laid out. Widths and cuts are
//! [`crate::text`]'s.

use unicode_width::UnicodeWidthChar;

/// Display width of a string.
pub fn width(s: &str) -> usize {
    crate::text::width(s)
}

/// `s` cut to `max` columns, with `…` when something was cut.
pub fn cut(s: &str, max: usize) -> String {
    crate::text::cut(s, max).into_owned()
}

/// Text from a DB made terminal-safe ([`crate::text::escape`]) line by line: its newlines stay
/// line breaks for [`wrap`], every other control character becomes visible (`\e`, `\t`).
pub fn escape_lines(s: &str) -> String {
    s.split('\n')
        .map(|l| crate::text::escape(l.strip_suffix('\r').unwrap_or(l)).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whitespace runs (newlines included) as one space: the one-line form of a text.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Word-wrap `text` into lines of at most `max` columns. Newlines in the text start new lines;
/// a word longer than a line is broken; an empty text is one empty line.
pub fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut out = Vec::new();
    for para in text.split('\n') {
        let para = para.trim_end_matches('\r');
        let mut line = String::new();
        let mut w = 0;
        for word in split_keep_spaces(para) {
            let ww = width(word);
            if w + ww <= max {
                line.push_str(word);
                w += ww;
                continue;
            }
            if word.trim().is_empty() {
                // a space at the break: drop it
                out.push(std::mem::take(&mut line));
                w = 0;
                continue;
            }
            if w > 0 {
                out.push(std::mem::take(&mut line).trim_end().to_string());
                w = 0;
            }
            // a word longer than the line: break it by columns
            for c in word.chars() {
                let cw = c.width().unwrap_or(0);
                if w + cw > max && w > 0 {
                    out.push(std::mem::take(&mut line));
                    w = 0;
                }
                line.push(c);
                w += cw;
            }
        }
        out.push(line.trim_end().to_string());
    }
    out
}

/// "a  b c" -> ["a", "  ", "b", " ", "c"]
fn split_keep_spaces(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (i, c) in s.char_indices() {
        let sp = c == ' ';
        match in_space {
            Some(prev) if prev != sp => {
                out.push(&s[start..i]);
                start = i;
            }
            _ => {}
        }
        in_space = Some(sp);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_by_columns_and_breaks_long_words() {
        assert_eq!(wrap("the quick brown fox", 9), ["the quick", "brown fox"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("a\n\nb", 10), ["a", "", "b"]);
        assert_eq!(wrap("", 10), [""]);
        // wide characters take two columns
        assert_eq!(wrap("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
        assert_eq!(cut("Hôtel du Louvre", 6), "Hôtel…");
        assert_eq!(cut("日本語", 4), "日…");
        assert_eq!(escape_lines("a\x1b[2Jb\r\nc\td"), "a\\e[2Jb\nc\\td");
    }
}
