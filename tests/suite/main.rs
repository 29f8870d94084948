//! The integration suite: one test binary, a module per behaviour.

mod charts;
mod cli;
mod common;
mod hostile;
mod library;
mod properties;
mod q4;
mod readme;
mod strategies;
mod sweep;
mod traces;
