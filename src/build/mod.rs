//! From a revision of the user's repository to an installed OpenSSL in the
//! cache: git access (read-only), Configure recipes, the builder and the
//! build cache. Knows nothing of kernels, samples or statistics.

pub mod builder;
pub mod builds;
pub mod compiler;
mod configured;
mod depends;
mod install;
pub mod installed;
pub mod makefile;
pub mod patch;
pub mod prefix;
pub mod recipe;
pub mod repo;
mod restat;
pub mod sources;
pub mod version;
