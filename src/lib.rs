//! perfbisect as a library: the pipeline from a revision range to a typed result — git and
//! builds (`build`), kernels, samples and the measurement engine (`measure`), statistics and
//! the pure search (`analysis`), results, their events and renderers (`report`), the searches
//! as calls that take a plan and return a result (`drive`) — and the commands (`cli`). The
//! `perfbisect` binary only parses the command line and calls these.
//!
//! A bisect from code, its steps told as they happen and its result typed. Every sample is
//! taken in a fresh process of the perfbisect binary (its hidden `__sample` subcommand; a
//! fleet's jobs run its `build` and `__lane`), so a program of its own names that binary in
//! `PERFBISECT_EXE` ([`measure::runner::EXE_ENV`]): without it, the engine would start the
//! program itself as the child. Every command that measures is such a call in [`drive`]
//! (`drive::run`, `compare`, `gate`, `matrix`, `parity`, `explain`, `bisect`, `scan`), a plan
//! in and a typed result out; the command line only makes the plan and renders the result.
//!
//! ```no_run
//! use perfbisect::drive::{self, BisectPlan, RangePlan};
//! use perfbisect::report::events::{Lines, LinesTo};
//!
//! let range = RangePlan::new("/src/openssl", "openssl-3.0.0..openssl-3.2.1", "pkeyread:key=ec");
//! let plan = BisectPlan::new(range);
//! let report = drive::bisect(&plan, &Lines::new(LinesTo::Stderr))?;
//! for change in report.changes.iter().filter(|c| c.confirmed) {
//!     println!("{} {}", change.info.short, change.comparison.ratio.pct());
//! }
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod analysis;
pub mod build;
pub mod cache;
pub mod cli;
pub mod drive;
pub mod hashing;
pub mod host;
pub mod interrupt;
pub mod measure;
pub mod progress;
pub mod report;
pub mod unavailable;
