//! One module per command; each turns parsed arguments into calls on the
//! pipeline stages and renders the result.

pub mod bisect;
pub mod build;
pub mod cache;
pub mod compare;
pub mod gate;
pub mod kernels;
pub mod log;
pub mod matrix;
pub mod recipes;
pub mod report;
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

/// `--shard I/N`: this runner's share of a fixed, ordered list of cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("malformed shard '{s}' (expected I/N with 1 <= I <= N)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Round-robin: cell i belongs to shard (i mod N) + 1.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count == self.index - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!(s.to_string(), "2/3");
        for bad in ["0/3", "4/3", "1/0", "x/2", "2", "1/2/3", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let shards: Vec<Shard> = (1..=3).map(|i| Shard { index: i, count: 3 }).collect();
        for cell in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.owns(cell)).count(), 1);
        }
    }

    #[test]
    fn number_parsers_reject_nonsense() {
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("8").is_ok());
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("inf").is_err());
        assert!(parse_fraction("1").is_err());
        assert!(parse_fraction("0.05").is_ok());
    }
}
