//! The bundled scenario library: every file of `scenarios/`, built into the binary so that
//! `leasesim run NAME` works anywhere.

include!(concat!(env!("OUT_DIR"), "/library.rs"));

/// The names of the bundled scenarios, sorted.
pub fn names() -> Vec<&'static str> {
    LIBRARY.iter().map(|(n, _)| *n).collect()
}

/// The RON text of the bundled scenario `name`.
pub fn text(name: &str) -> Option<&'static str> {
    LIBRARY.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
