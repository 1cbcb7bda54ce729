//! From an installed OpenSSL to samples: kernels, their compilation, the
//! isolated sampling child, the sample cache, and the engine that takes
//! interleaved samples of several subjects. Makes no statistical decision.

pub mod compile;
pub mod engine;
pub mod exec;
pub mod kernel;
pub mod metric;
pub mod perftools;
pub mod profile;
pub mod runner;
pub mod samples;
