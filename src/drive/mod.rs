//! The searches as library calls: a validated plan in ([`plan`]), a typed result out, every
//! step told to a [`Sink`](crate::report::events::Sink) as it happens. Between them: the range
//! opened and its sessions made ([`setup`]), the adapter that shows sessions to the pure
//! search ([`live`]), what identifies a run's samples ([`ids`]), a bisect's state in the cache
//! ([`state`]). The commands only turn their arguments into a plan and render the result.
//!
//! Layering: above `report` (whose typed results and events it fills) and `measure`; below
//! `cli`, which it never imports.

pub mod bisect;
pub mod compare;
mod explain;
pub mod gate;
mod ids;
pub mod live;
mod merge_base;
pub mod plan;
pub mod scan;
pub mod setup;
pub mod shard;
mod state;

pub use bisect::bisect;
pub use plan::{BisectPlan, RangePlan, ScanPlan};
pub use scan::scan;
