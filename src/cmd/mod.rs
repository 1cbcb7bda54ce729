//! One module per command; each turns parsed arguments into calls on the
//! pipeline stages and renders the result.

pub mod bisect;
pub mod build;
pub mod cache;
pub mod compare;
pub mod kernels;
pub mod log;
pub mod recipes;
pub mod run;
pub mod simulate;

/// `--threads 1,2,4`: every entry a positive integer.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("thread counts must be at least 1".into()),
        Ok(n) if n > 4096 => Err(format!("{n} threads is more than perfbisect allows (4096)")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a thread count")),
    }
}

/// A positive, finite number of seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err("the duration must be more than 0 seconds".into()),
        Err(_) => Err(format!("'{s}' is not a number of seconds")),
    }
}

pub fn parse_samples(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a positive number of samples")),
    }
}

/// A probability strictly between 0 and 1 (alpha).
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        Ok(_) => Err("alpha must be between 0 and 1 (exclusive)".into()),
        Err(_) => Err(format!("'{s}' is not a number")),
    }
}
