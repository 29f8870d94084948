//! The integration suite: one test binary, a module per behaviour.

mod common;
mod properties;
mod q4;
mod strategies;
