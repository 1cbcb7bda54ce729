//! Statistics and the search: pure functions of samples. Nothing here builds,
//! runs a process or touches the cache; samples arrive through
//! [`bisect::Measurer`].

pub mod alpha;
pub mod bisect;
pub mod fleet;
pub mod lanes;
pub mod locate;
pub mod profile;
pub mod resolution;
pub mod rounds;
pub mod samples;
pub mod scan;
pub mod segment;
pub mod series;
pub mod simulate;
pub mod stats;
pub mod within;
