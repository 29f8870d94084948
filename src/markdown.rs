//! Markdown text from the user's strings (scenario and node names, descriptions, strategies,
//! `--vary` names and values, paths, commands): the escaping every Markdown file leasesim
//! writes gives them, so that none can become HTML, begin a code span or split a table row, and
//! each shows as written.

/// `text` as Markdown text, in prose or in a table cell: a `<` that could begin a tag and an `&`
/// that could begin an entity as HTML entities (no tag or attribute can form, `<script>` shows
/// as written; `a < b` and `a & b` stay as they are), `|` escaped (a table row is never
/// split; `\\` too, so that a user's own backslash cannot undo that), `` ` `` escaped (no code span
/// begins), and line breaks and tabs as spaces (a row stays one line). Shows as `text`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().unwrap_or(' ');
        match c {
            // Only where HTML could begin: a tag, a comment or declaration, an entity.
            '<' if next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?') => {
                out.push_str("&lt;")
            }
            '&' if next.is_ascii_alphanumeric() || next == '#' => out.push_str("&amp;"),
            '|' | '\\' | '`' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a Markdown code span: between more backticks than any run of them in it (padded
/// with a space when it begins or ends with one), `|` escaped for a table cell, line breaks as
/// spaces. HTML does not form in a code span. Shows as `text`.
pub fn code(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .replace('|', "\\|");
    let fence = "`".repeat(longest_run(&flat, '`') + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{flat}{pad}{fence}")
}

/// The fence of a fenced code block holding `text`: three backticks, or more than any run of
/// them in it, so that no line of `text` can close it.
pub fn fence(text: &str) -> String {
    "`".repeat((longest_run(text, '`') + 1).max(3))
}

fn longest_run(text: &str, of: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == of { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_could_become_html_or_split_a_row_and_nothing_else() {
        assert_eq!(escape("<script>"), "&lt;script>");
        assert_eq!(escape("a < b & c > d"), "a < b & c > d");
        assert_eq!(escape("&amp; &#60;"), "&amp;amp; &amp;#60;");
        assert_eq!(escape("a|b\\|c"), "a\\|b\\\\\\|c");
        assert_eq!(escape("`x`\nnext"), "\\`x\\` next");
        assert_eq!(escape("T * rho, renew_every"), "T * rho, renew_every");
    }

    #[test]
    fn a_code_span_is_fenced_longer_than_its_backticks() {
        assert_eq!(code("TwoSided"), "`TwoSided`");
        assert_eq!(code("a`b|c"), "``a`b\\|c``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}
