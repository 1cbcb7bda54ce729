//! `--shard I/N`: a runner's share of a fixed, ordered list of cells (a gate's or a matrix's
//! tool × thread-count comparisons), so that several CI runners split one list the same way.

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

/// This shard's share of a fixed, ordered list of cells (all of it without
/// `--shard`), so every runner splits the list the same way.
pub fn sharded<T>(cells: Vec<T>, shard: Option<&Shard>) -> Vec<T> {
    match shard {
        None => cells,
        Some(sh) => cells
            .into_iter()
            .enumerate()
            .filter(|(i, _)| sh.owns(*i))
            .map(|(_, c)| c)
            .collect(),
    }
}

/// Every (tool index, threads) pair, tools outermost, then this shard's share.
pub fn cells(specs: usize, threads: &[usize], shard: Option<&Shard>) -> Vec<(usize, usize)> {
    let all = (0..specs)
        .flat_map(|s| threads.iter().map(move |&t| (s, t)))
        .collect();
    sharded(all, shard)
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
}
