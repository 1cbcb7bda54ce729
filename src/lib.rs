//! perfbisect as a library: the pipeline from a revision range to a typed result — git and
//! builds (`build`), kernels, samples and the measurement engine (`measure`), statistics and
//! the pure search (`analysis`), results, their events and renderers (`report`), the searches
//! as calls that take a plan and return a result (`drive`) — and the commands (`cli`). The
//! `perfbisect` binary only parses the command line and calls these.

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
