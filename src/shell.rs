//! Words of a command line as a POSIX shell reads them back: the commands the reports and the
//! written scenarios give to rerun something name the user's paths and values, which may hold
//! spaces, quotes, markup or line breaks.

/// `s` as one shell word: as it is when it holds only characters no shell treats specially,
/// else in single quotes (a `'` inside as `'\''`), or, when it holds a control character (a
/// line break, a tab, an escape), in ANSI-C quotes (`$'...'`, understood by bash, zsh and
/// ksh), so that the word stays on one line and reads back as `s`.
pub fn word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/=,:+".contains(c))
    {
        return s.to_string();
    }
    if !s.chars().any(char::is_control) {
        return format!("'{}'", s.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str(r"\'"),
            '\\' => out.push_str(r"\\"),
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!(r"\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!(r"\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::word;

    #[test]
    fn plain_words_stay_and_the_rest_is_quoted_on_one_line() {
        assert_eq!(word("scenarios/q4.ron"), "scenarios/q4.ron");
        assert_eq!(word("lease.duration=5s,10s"), "lease.duration=5s,10s");
        assert_eq!(word(""), "''");
        assert_eq!(word("my file.ron"), "'my file.ron'");
        assert_eq!(word("x<i>y.ron"), "'x<i>y.ron'");
        assert_eq!(word("it's.ron"), r"'it'\''s.ron'");
        assert_eq!(word("a\n)//b"), r"$'a\n)//b'");
        assert_eq!(word("q'\\\t\x1b\u{85}"), r"$'q\'\\\t\x1b\u0085'");
        for s in ["a\nb", "x'y\rz", "\u{9b}"] {
            assert!(!word(s).contains(['\n', '\r', '\u{9b}']), "{s:?}");
        }
    }

    /// What bash reads back from the word is the string itself.
    #[test]
    fn bash_reads_each_word_back_as_itself() {
        let Ok(out) = std::process::Command::new("bash")
            .arg("-c")
            .arg("true")
            .output()
        else {
            return; // no bash here: the quoting rules are pinned above
        };
        assert!(out.status.success());
        for s in [
            "plain",
            "two words",
            "it's",
            "a\nb",
            "tab\there 'q' \\ \x1b end",
            "<b>|x",
        ] {
            let script = format!("printf '%s' {}", word(s));
            let out = std::process::Command::new("bash")
                .arg("-c")
                .arg(&script)
                .output()
                .expect("bash runs");
            assert_eq!(String::from_utf8_lossy(&out.stdout), s, "{script}");
        }
    }
}
