//! perfbisect as a library: the pipeline from a revision range to a typed result — git and
//! builds (`build`), kernels, samples and the measurement engine (`measure`), statistics and
//! the pure search (`analysis`), results, their events and renderers (`report`), the searches
//! as calls that take a plan and return a result (`drive`) — and the commands (`cli`). The
//! `perfbisect` binary only parses the command line and calls these.
//!
//! A bisect from code, its steps told as they happen and its result typed:
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
