//! Names and paths from a checkpoint, made safe to print: a crafted tensor name or file name
//! must not move the cursor, clear the screen, rewrite a line or reorder text. Control
//! characters (C0, DEL, C1: NUL, ESC, CR, ...) become `\xNN`/`\u{NNNN}`, the bidirectional
//! controls (U+061C, U+200E/F, U+202A..E, U+2066..9) `\u{NNNN}`, and a backslash `\\`, so
//! that an escaped name is never mistaken for another.

use std::path::Path;

/// Whether `c` is printed escaped.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `s` with every character that could rewrite a terminal escaped (see the module docs).
pub(crate) fn text(s: &str) -> String {
    if !s.chars().any(|c| unsafe_char(c) || c == '\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if unsafe_char(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// A whole line of output, every character that could rewrite a terminal escaped as in
/// [`text`], backslashes left as they are (the line's own text has some).
pub(crate) fn line(s: &str) -> String {
    if !s.chars().any(unsafe_char) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    if (c as u32) < 0x80 {
        out.push_str(&format!("\\x{:02X}", c as u32));
    } else {
        out.push_str(&format!("\\u{{{:04X}}}", c as u32));
    }
}

/// A path, escaped as [`text`] (bytes that are not UTF-8 shown as U+FFFD).
pub(crate) fn path(p: &Path) -> String {
    text(&p.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use crate::escape::{line, text};

    #[test]
    fn escapes() {
        assert_eq!(text("model.layers.0.weight"), "model.layers.0.weight");
        assert_eq!(text("a\u{1b}[2Jb"), "a\\x1B[2Jb");
        assert_eq!(text("x\ry\0z\n"), "x\\x0Dy\\x00z\\x0A");
        assert_eq!(text("\u{202E}gpj.exe"), "\\u{202E}gpj.exe");
        assert_eq!(text("\u{9b}"), "\\u{009B}");
        assert_eq!(text("a\\x1B"), "a\\\\x1B");
        assert_eq!(text("é中"), "é中");
        assert_eq!(line("C:\\x \u{1b}]0;t\u{7}"), "C:\\x \\x1B]0;t\\x07");
    }
}
