//! Placeholder until the full statistics module lands (same API).
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    pub se: f64,
    pub ci95: (f64, f64),
}

pub fn summarize(xs: &[f64]) -> Summary {
    let n = xs.len();
    let mean = if n == 0 { f64::NAN } else { xs.iter().sum::<f64>() / n as f64 };
    let sd = if n < 2 {
        0.0
    } else {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    let se = if n == 0 { 0.0 } else { sd / (n as f64).sqrt() };
    Summary { n, mean, sd, se, ci95: (mean - 2.0 * se, mean + 2.0 * se) }
}
