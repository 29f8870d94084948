//! The crate's top-level modules (`scenario`, `strategy`, `engine`, `oracle`, `trace`, ...)
//! import one another without a cycle, so each can be read, tested and changed standing on the
//! ones below it alone.
//!
//! How the check works: the top-level modules are the `mod` lines of `src/lib.rs`. Every `.rs`
//! file under `src/` belongs to the top-level module its path starts with (`src/scenario/load.rs`
//! to `scenario`, `src/compare.rs` to `compare`). Each file is read with its comments, string
//! and character literals blanked out (a doc example or a message that mentions `crate::x`
//! imports nothing), and every `crate::x` in it, each name of a `crate::{x, y::z}` group, and,
//! in a module's own top file (`src/x.rs`, `src/x/mod.rs`), every `super::x`, is an edge from
//! its module to `x` when `x` is a top-level module. A depth-first search of that graph must
//! find no cycle; the test prints the one it finds, with a file that makes each edge. Where a
//! lower module must reach an upper one, it declares a trait that the upper one implements
//! (`scenario::Protocols`, implemented by `strategy::Registry`), and the import goes upward
//! no more. Code reached only through the crate's root (`leasesim::run`) is no module's.
//!
//! The same reader holds the crate to functions that fit a screen: no function in `src/`
//! outside `#[cfg(test)]` items and `*tests.rs` files is over 120 lines, from the line of its
//! `fn` to that of its closing brace, unless a comment containing "long because" stands among
//! the comment and attribute lines just above it. The test lists every offender at file:line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The edges, from each module to those it imports, each with a file that does it.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// `text` with its comments and its string and character literals blanked out (newlines kept).
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let at = |j: usize| c.get(j).copied();
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && at(i + 1) == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && at(i + 1) == Some('*') {
            let from = i;
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == Some('*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == Some('/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            keep_newlines(&mut out, &c[from..i.min(c.len())]);
        } else if c[i] == 'r' && matches!(at(i + 1), Some('"' | '#')) && !ident_before(&c, i) {
            // A raw string: r"..." or r#"..."#, closed by a quote and as many #.
            let mut hashes = 0;
            let mut j = i + 1;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            j += 1;
            while j < c.len() && !(c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')))
            {
                j += 1;
            }
            out.push_str("\"\"");
            keep_newlines(&mut out, &c[i..j.min(c.len())]);
            i = j + 1 + hashes;
        } else if c[i] == '"' {
            let from = i;
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
            keep_newlines(&mut out, &c[from..i.min(c.len())]);
        } else if c[i] == '\'' && (at(i + 2) == Some('\'') || at(i + 1) == Some('\\')) {
            // A character literal ('x', '\n', '\u{1F600}'); a lifetime ('a) is code.
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// As many newlines onto `out` as `blanked` holds, so that lines keep their numbers.
fn keep_newlines(out: &mut String, blanked: &[char]) {
    out.extend(blanked.iter().filter(|&&ch| ch == '\n'));
}

/// Whether the character before `i` continues an identifier (`for"` is not a raw string).
fn ident_before(c: &[char], i: usize) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

/// The names `code` reaches through `prefix` (`crate::`): `crate::x` gives `x`, and
/// `crate::{x, y::z}` gives `x` and `y`.
fn reached(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices(prefix) {
        if at > 0 && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // `mycrate::x` is not `crate::x`
        }
        let after = code[at + prefix.len()..].trim_start();
        if let Some(group) = after.strip_prefix('{') {
            // The first name of each item at the group's own depth.
            let mut depth = 0;
            let mut item_start = true;
            for (k, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => {
                        names.insert(ident(&group[k..]));
                        item_start = false;
                    }
                    c if !c.is_whitespace() => item_start = false,
                    _ => {}
                }
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// The top-level modules: the `mod` lines of `lib.rs`.
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    code_only(&lib)
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The import graph of the crate whose sources are in `src`.
fn graph(src: &Path) -> Graph {
    let modules = top_level_modules(src);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut g = Graph::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let module = parts[0].trim_end_matches(".rs").to_string();
        if !modules.contains(&module) {
            continue; // lib.rs, main.rs
        }
        let code = code_only(&std::fs::read_to_string(&file).expect("a readable file"));
        let mut names = reached(&code, "crate::");
        // In a module's top file, `super` is the crate's root.
        if parts.len() == 1 || (parts.len() == 2 && parts[1] == "mod.rs") {
            names.extend(reached(&code, "super::"));
        }
        for name in names {
            if name != module && modules.contains(&name) {
                g.entry(module.clone())
                    .or_default()
                    .entry(name)
                    .or_insert_with(|| rel.display().to_string());
            }
        }
    }
    g
}

/// A cycle of `g`, as the modules along it (the first again at the end), if it has one.
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    /// 0: not seen, 1: on the current path, 2: done.
    fn visit(
        g: &Graph,
        m: &str,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for next in g.get(m).into_iter().flat_map(|e| e.keys()) {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let from = path.iter().position(|p| p == next).expect("on the path");
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(g, next, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if state.get(m).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(g, m, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_top_level_modules_import_one_another_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    // The graph is the crate's: the modules that must stand apart are in it.
    for (from, to) in [
        ("engine", "strategy"),
        ("strategy", "scenario"),
        ("trace", "oracle"),
    ] {
        assert!(
            g.get(from).is_some_and(|e| e.contains_key(to)),
            "{from} imports {to}: {g:?}"
        );
    }
    if let Some(cycle) = find_cycle(&g) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("  {} -> {} (in src/{})", w[0], w[1], g[&w[0]][&w[1]]))
            .collect();
        panic!(
            "the modules import one another in a cycle:\n{}",
            steps.join("\n")
        );
    }
}

/// The reader: comments, strings and characters import nothing; a group names each of its
/// items' first names; `mycrate::` is not `crate::`; a lifetime is not a character.
#[test]
fn imports_are_read_from_code_alone() {
    let code = code_only(
        r##"use crate::{scenario::{A, B}, strategy, time::LocalDur};
// use crate::engine;
/* crate::oracle /* nested */ crate::trace */
let s = "crate::report"; let r = r#"crate::cli "quoted" "#; let c = '"';
fn f<'a>(x: &'a str) -> crate::outcome::Summary { mycrate::sweep::x() }
"##,
    );
    let names: Vec<String> = reached(&code, "crate::").into_iter().collect();
    assert_eq!(names, ["outcome", "scenario", "strategy", "time"]);
}

/// The search finds a cycle of three (and gives it in order), and none in a chain.
#[test]
fn a_cycle_is_found_and_a_chain_is_not() {
    let edge = |g: &mut Graph, a: &str, b: &str| {
        g.entry(a.into())
            .or_default()
            .insert(b.into(), "f.rs".into());
    };
    let mut g = Graph::new();
    edge(&mut g, "a", "b");
    edge(&mut g, "b", "c");
    edge(&mut g, "a", "c");
    assert_eq!(find_cycle(&g), None);
    edge(&mut g, "c", "a");
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

/// The longest a function in `src/` may be, in lines from its `fn` to its closing brace.
const MAX_FN_LINES: usize = 120;

/// A function found in a file: its name, the 1-based line of its `fn`, and its length in lines
/// (from that line to the line of its closing brace, both counted).
#[derive(Debug, PartialEq)]
struct FnSpan {
    name: String,
    line: usize,
    lines: usize,
}

/// The index just past the item that starts at `from` in `code`: its braced body's closing
/// brace, or its `;` when a `;` comes first outside parentheses and brackets (a declaration
/// without a body, `fn f(x: [u8; 4]);`). `None` when the text ends first.
fn item_end(code: &[u8], from: usize) -> Option<usize> {
    let mut nest = 0i32; // ( and [
    let mut i = from;
    while i < code.len() {
        match code[i] {
            b'(' | b'[' => nest += 1,
            b')' | b']' => nest -= 1,
            b';' if nest == 0 => return Some(i + 1),
            b'{' if nest == 0 => {
                let mut depth = 0i32;
                while i < code.len() {
                    match code[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(i + 1);
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                return None;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The byte ranges of `code` that belong to items under `#[cfg(test)]` (a test module, a
/// test-only function): from the attribute to the item's end.
fn test_only_ranges(code: &str) -> Vec<(usize, usize)> {
    let bytes = code.as_bytes();
    let mut ranges = Vec::new();
    for (at, attr) in code.match_indices("#[cfg(test)]") {
        let end = item_end(bytes, at + attr.len()).unwrap_or(code.len());
        ranges.push((at, end));
    }
    ranges
}

/// The functions with a body in `code` (already blanked by `code_only`), outside `#[cfg(test)]`
/// items, in order. A `fn` not followed by a name (a `fn(u32) -> u32` pointer type) or without
/// a body (a trait's declaration) is none.
fn functions(code: &str) -> Vec<FnSpan> {
    let bytes = code.as_bytes();
    let skip = test_only_ranges(code);
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    for (at, _) in code.match_indices("fn") {
        let before_ok = at == 0 || !is_ident(bytes[at - 1]);
        let after = &code[at + 2..];
        let name_from = after.len() - after.trim_start().len();
        if !before_ok || name_from == 0 || skip.iter().any(|&(a, b)| (a..b).contains(&at)) {
            continue;
        }
        let name: String = after[name_from..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let Some(end) = item_end(bytes, at + 2 + name_from + name.len()) else {
            continue;
        };
        if bytes[end - 1] != b'}' {
            continue; // a declaration without a body
        }
        let line = code[..at].matches('\n').count() + 1;
        let last = code[..end].matches('\n').count() + 1;
        found.push(FnSpan {
            name,
            line,
            lines: last - line + 1,
        });
    }
    found
}

/// Whether a comment containing "long because" stands among the comment and attribute lines
/// just above line `line` (1-based) of `text`.
fn says_why_long(text: &str, line: usize) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    lines[..line - 1]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("//") || l.starts_with("#[") || l.starts_with("#!["))
        .any(|l| l.starts_with("//") && l.contains("long because"))
}

/// Every function in the `.rs` files under `src` over `MAX_FN_LINES` without a comment saying
/// why, as `path:line fn name (N lines)`, with `path` relative to `src`'s parent.
fn long_functions(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let root = src.parent().expect("src has a parent");
    let mut long = Vec::new();
    for file in files {
        if file
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("tests.rs"))
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a readable file");
        for f in functions(&code_only(&text)) {
            if f.lines > MAX_FN_LINES && !says_why_long(&text, f.line) {
                let rel = file.strip_prefix(root).expect("under the crate");
                long.push(format!(
                    "{}:{} fn {} ({} lines)",
                    rel.display(),
                    f.line,
                    f.name,
                    f.lines
                ));
            }
        }
    }
    long
}

#[test]
fn no_function_in_src_is_over_120_lines_without_saying_why() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long = long_functions(&src);
    assert!(
        long.is_empty(),
        "{} functions are over {MAX_FN_LINES} lines, from `fn` to the closing brace; split \
         them by job, or say why on a comment just above with the words \"long because\":\n  {}",
        long.len(),
        long.join("\n  ")
    );
}

/// The reader of functions: a length counts the `fn` line and the closing brace's, and strings
/// and comments over several lines keep their lines; a `fn` pointer type, a declaration without
/// a body (even with `[u8; 4]` in it), braces in strings and comments, and a `#[cfg(test)]`
/// module's functions are none; a nested function is its own. "long because" counts above a
/// function, through its doc and attribute lines, and not past a line of code.
#[test]
fn functions_are_read_with_their_lengths() {
    let text = r##"trait T {
    fn declared(x: [u8; 4]) -> u8;
}
fn four(f: fn(u32) -> u32) -> &'static str {
    "{ not a
    brace }" // nor this }
}
pub(crate) async fn outer<'a>(x: &'a [u8; 2]) where u8: Copy {
    /* a comment
       over two lines { */
    fn inner() {}
}
// long because: the test says so.
/// A doc line.
#[inline]
fn excused() {
}
fn plain() {}
#[cfg(test)]
mod tests {
    fn hidden() {
    }
}
"##;
    let code = code_only(text);
    assert_eq!(code.lines().count(), text.lines().count());
    let found = functions(&code);
    let spans: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines))
        .collect();
    // four: lines 4 to 7; outer: 8 to 12, with inner on 11; excused: 16 to 17; plain: 18.
    assert_eq!(
        spans,
        [
            ("four", 4, 4),
            ("outer", 8, 5),
            ("inner", 11, 1),
            ("excused", 16, 2),
            ("plain", 18, 1)
        ]
    );
    assert!(says_why_long(text, 16));
    assert!(!says_why_long(text, 18), "the line above is code");
    assert!(!says_why_long(text, 4));
}
