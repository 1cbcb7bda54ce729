//! The commands' work as library calls: a validated plan in, a typed result out. The searches
//! ([`bisect()`], [`scan()`]) tell every step to a [`Sink`](crate::report::events::Sink) as it
//! happens; [`compare`], [`gate`], [`matrix`], [`run`](mod@run) and [`parity`] measure fixed
//! sets of subjects, [`explain`] profiles two (every command that measures makes its session
//! here; [`libraries`] says which OpenSSLs `run` and `parity` take). Between plan
//! and result: the range opened and its sessions made ([`setup`]), the adapter that shows
//! sessions to the pure search ([`live`]), what identifies a run's samples (`ids`), a bisect's
//! state in the cache (`state`), a CI runner's share of the cells ([`shard`]). The commands
//! only turn their arguments into a plan and render the result.
//!
//! Layering: above `report` (whose typed results and events it fills) and `measure`; below
//! `cli`, which it never imports.

pub mod bisect;
pub mod compare;
pub mod explain;
pub mod gate;
mod ids;
pub mod libraries;
pub mod live;
pub mod matrix;
mod merge_base;
pub mod parity;
pub mod plan;
pub mod run;
pub mod scan;
pub mod setup;
pub mod shard;
mod state;

pub use bisect::bisect;
pub use plan::{BisectPlan, RangePlan, ScanPlan};
pub use scan::scan;
