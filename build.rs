//! Builds the scenario library into the binary: every `scenarios/*.ron`, sorted by name (without
//! the extension, so `a` comes before `a-b`).

use std::env;
use std::fs;
use std::path::Path;

fn main() {
    let dir = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("scenarios");
    println!("cargo:rerun-if-changed=scenarios");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter_map(|n| n.strip_suffix(".ron").map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut code =
        String::from("/// (name, RON text) of every bundled scenario, sorted by name.\n");
    code.push_str("pub static LIBRARY: &[(&str, &str)] = &[\n");
    for n in &names {
        println!("cargo:rerun-if-changed=scenarios/{n}.ron");
        code.push_str(&format!(
            "    ({n:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/scenarios/{n}.ron\"))),\n"
        ));
    }
    code.push_str("];\n");
    fs::write(
        Path::new(&env::var("OUT_DIR").unwrap()).join("library.rs"),
        code,
    )
    .unwrap();
}
