//! The fast tier's integration tests, compiled into one binary: each `tests/NAME.rs` below is a
//! module of it (one link of the library and its dependencies instead of one per file, and
//! `cargo test` runs them all on one pool of threads instead of one binary after another).
//! A new fast-tier file is added here; the full tier's e2e_release and e2e_newest stay
//! binaries of their own (Cargo.toml lists the three: `autotests = false`).

#[path = "build_records.rs"]
mod build_records;
#[path = "ccache_remote.rs"]
mod ccache_remote;
#[path = "cli_system.rs"]
mod cli_system;
mod common;
#[path = "events.rs"]
mod events;
#[path = "golden.rs"]
mod golden;
#[path = "hardening.rs"]
mod hardening;
#[path = "library.rs"]
mod library;
#[path = "pairs.rs"]
mod pairs;
#[path = "parity.rs"]
mod parity;
#[path = "patches.rs"]
mod patches;
#[path = "plan.rs"]
mod plan;
#[path = "repo_kinds.rs"]
mod repo_kinds;
#[path = "report_html.rs"]
mod report_html;
#[path = "scan.rs"]
mod scan;
#[path = "slurm.rs"]
mod slurm;
