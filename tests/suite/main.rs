//! The integration suite: one test binary, a module per behaviour.

mod batch;
mod charts;
mod chubby;
mod cli;
mod common;
mod golden;
mod hostile;
mod k8s;
mod leaseguard;
mod library;
mod metamorphic;
mod newcomer;
mod pins;
mod properties;
mod q4;
mod raft;
mod read_authority;
mod readme;
mod redlock;
mod registry;
mod regressions;
mod slack;
mod strategies;
mod sweep;
mod traces;
mod truetime;
