//! The runbook engine, construct by construct (kernel-v0.md), with a host that answers tools
//! from a function and keeps the journal and trace in memory; and gert's own example with its
//! three recorded scenarios.

mod constructs;
mod flow;
mod graph;
mod journal;
mod legacy;
mod parallel;
mod scenarios;
mod service;
mod support;
