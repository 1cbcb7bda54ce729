//! Where the instructions of one operation go, and how that changed between
//! two builds: callgrind's output (run with `--separate-callers`, so every
//! function's cost is split by its chain of callers) read into folded stacks,
//! and per-function self and inclusive costs per operation compared.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Folded stacks ("root;caller;callee" → instructions), rooted at the
/// function the measured loop called (the kernel's `pb_run`); the measured
/// function's own instructions are the one-frame stack of its name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub stacks: BTreeMap<String, u64>,
    /// Operations the profile covers.
    pub ops: u64,
}

/// Marks a stack deeper than callgrind's caller chains reach.
pub const CUT: &str = "[deeper]";

impl Profile {
    /// Reads callgrind's text format: `fn=`/`cfn=` name compression, cost lines (position then
    /// Ir), and the cost line after `calls=` that is the call's inclusive cost, not the
    /// function's own.
    /// `root`: the function the measured loop called; the frames below it (the harness) are
    /// cut.
    pub fn from_callgrind(text: &str, ops: u64, root: &str) -> Result<Profile> {
        let mut names: HashMap<String, String> = HashMap::new();
        let mut resolve = |v: &str| -> String {
            let v = v.trim();
            match v.strip_prefix('(').and_then(|r| r.split_once(')')) {
                Some((id, rest)) => {
                    let rest = rest.trim();
                    if rest.is_empty() {
                        names.get(id).cloned().unwrap_or_else(|| format!("({id})"))
                    } else {
                        names.insert(id.to_string(), rest.to_string());
                        rest.to_string()
                    }
                }
                None => v.to_string(),
            }
        };
        let mut stacks: BTreeMap<String, u64> = BTreeMap::new();
        let mut current: Option<String> = None;
        let mut after_calls = false;
        let mut saw_events = false;
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("fn=") {
                current = Some(stack_of(&resolve(v), root));
                after_calls = false;
            } else if let Some(v) = line.strip_prefix("cfn=") {
                // Registers the name for later fn= references.
                resolve(v);
            } else if line.starts_with("calls=") {
                after_calls = true;
            } else if line.starts_with("events:") {
                saw_events = true;
                if line.split_whitespace().nth(1) != Some("Ir") {
                    bail!("callgrind output counts '{line}', not Ir first");
                }
            } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
                let cost: u64 = line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                if after_calls {
                    after_calls = false;
                } else if let Some(s) = &current {
                    if cost > 0 {
                        *stacks.entry(s.clone()).or_default() += cost;
                    }
                }
            }
        }
        if !saw_events {
            bail!("not a callgrind output file (no events: line)");
        }
        Ok(Profile { stacks, ops })
    }

    pub fn total(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Per function: (self, inclusive) instructions over the whole profile. Inclusive counts a
    /// stack once however often the function recurs in it.
    pub fn functions(&self) -> BTreeMap<String, (u64, u64)> {
        let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for (stack, &cost) in &self.stacks {
            let frames: Vec<&str> = stack.split(';').collect();
            let mut seen: Vec<&str> = Vec::new();
            for f in &frames {
                if !seen.contains(f) {
                    seen.push(f);
                    out.entry(f.to_string()).or_default().1 += cost;
                }
            }
            if let Some(leaf) = frames.last() {
                out.entry(leaf.to_string()).or_default().0 += cost;
            }
        }
        out.remove(CUT);
        out
    }

    /// Folded stacks per operation (rounded; inferno's input format).
    pub fn folded_per_op(&self) -> String {
        let ops = self.ops.max(1) as f64;
        let mut s = String::new();
        for (stack, &cost) in &self.stacks {
            let v = (cost as f64 / ops).round() as u64;
            if v > 0 {
                s.push_str(&format!("{stack} {v}\n"));
            }
        }
        s
    }
}

/// `leaf'caller'…'root'harness…` → `pb_run;…;leaf`, cut at the measured
/// function; a chain that does not reach it starts with [`CUT`]; the measured
/// function's own instructions (its loop) are the stack `root`.
fn stack_of(context: &str, root: &str) -> String {
    let chain: Vec<&str> = context.split('\'').collect();
    let (frames, cut) = match chain.iter().position(|f| *f == root) {
        // Cut above the root, its own instructions would be a stack with no frame: inferno
        // takes such a line's first count for a frame's name and draws that frame with no
        // difference, in its palette's red.
        Some(0) => (&chain[..1], false),
        Some(i) => (&chain[..i], false),
        None => (&chain[..], true),
    };
    let mut v: Vec<&str> = frames.iter().rev().copied().collect();
    if cut {
        v.insert(0, CUT);
    }
    v.join(";")
}

/// One function's cost per operation before and after.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct FunctionChange {
    pub function: String,
    pub self_before: f64,
    pub self_after: f64,
    pub self_diff: f64,
    pub inclusive_before: f64,
    pub inclusive_after: f64,
    pub inclusive_diff: f64,
    /// self_diff / (total after − total before): the function's own share of the change (the
    /// shares of all functions add up to 1).
    pub share: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ProfileDiff {
    pub total_before: f64,
    pub total_after: f64,
    /// Largest |self_diff| first, at most `top`.
    pub functions: Vec<FunctionChange>,
}

pub fn diff(before: &Profile, after: &Profile, top: usize) -> ProfileDiff {
    let (oa, ob) = (before.ops.max(1) as f64, after.ops.max(1) as f64);
    let (fa, fb) = (before.functions(), after.functions());
    let total_before = before.total() as f64 / oa;
    let total_after = after.total() as f64 / ob;
    let change = total_after - total_before;
    let mut names: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    names.sort();
    names.dedup();
    let mut functions: Vec<FunctionChange> = names
        .into_iter()
        .map(|n| {
            let (sa, ia) = fa.get(n).copied().unwrap_or_default();
            let (sb, ib) = fb.get(n).copied().unwrap_or_default();
            let (sa, ia, sb, ib) = (
                sa as f64 / oa,
                ia as f64 / oa,
                sb as f64 / ob,
                ib as f64 / ob,
            );
            FunctionChange {
                function: n.clone(),
                self_before: sa,
                self_after: sb,
                self_diff: sb - sa,
                inclusive_before: ia,
                inclusive_after: ib,
                inclusive_diff: ib - ia,
                share: if change != 0.0 {
                    (sb - sa) / change
                } else {
                    f64::NAN
                },
            }
        })
        .collect();
    functions.sort_by(|x, y| {
        y.self_diff
            .abs()
            .total_cmp(&x.self_diff.abs())
            .then(y.inclusive_diff.abs().total_cmp(&x.inclusive_diff.abs()))
    });
    functions.truncate(top);
    ProfileDiff {
        total_before,
        total_after,
        functions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sampling child's measured function (measure::metric::MEASURED_FN), as in the fixture.
    const ROOT: &str = "perfbisect_measured_run";

    const CG: &str =
        "# callgrind format\nversion: 1\npositions: line\nevents: Ir\nsummary: 1000\n\n\
ob=(1) /lib/libcrypto.so\nfl=(1) ???\n\
fn=(1) pb_run'perfbisect_measured_run'closure'start\n0 10\n\
cfn=(2) decode'pb_run'perfbisect_measured_run'closure'start\ncalls=2 0\n0 600\n\
cfn=(3) malloc'pb_run'perfbisect_measured_run'closure'start\ncalls=2 0\n0 90\n\
fn=(2)\n0 500\n\
cfn=(4) malloc'decode'pb_run'perfbisect_measured_run'closure'start\ncalls=4 0\n0 100\n\
fn=(3)\n+2 90\n\
fn=(4)\n* 100\n\
fn=(5) deep'a'b\n0 8\n\
totals: 798\n";

    #[test]
    fn callgrind_contexts_become_folded_stacks() {
        let p = Profile::from_callgrind(CG, 2, ROOT).unwrap();
        let want: BTreeMap<String, u64> = [
            ("pb_run", 10),
            ("pb_run;decode", 500),
            ("pb_run;malloc", 90),
            ("pb_run;decode;malloc", 100),
            ("[deeper];b;a;deep", 8),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(p.stacks, want);
        assert_eq!(p.total(), 708);
        let f = p.functions();
        assert_eq!(f["malloc"], (190, 190));
        assert_eq!(f["decode"], (500, 600));
        assert_eq!(f["pb_run"], (10, 700));
        assert!(p.folded_per_op().contains("pb_run;decode 250\n"));
        assert!(Profile::from_callgrind("hello", 1, ROOT).is_err());
    }

    #[test]
    fn the_measured_functions_own_instructions_are_its_frame() {
        let cg = "events: Ir\nfn=(1) perfbisect_measured_run'closure'start\n0 6\n\
                  fn=(2) pb_run'perfbisect_measured_run'closure'start\n0 10\n";
        let p = Profile::from_callgrind(cg, 2, ROOT).unwrap();
        assert_eq!(p.stacks.get(ROOT), Some(&6), "{:?}", p.stacks);
        assert_eq!(p.functions()[ROOT], (6, 6));
        assert!(p.folded_per_op().lines().all(|l| !l.starts_with(' ')));
    }

    #[test]
    fn diff_ranks_by_own_change_and_shares_add_up() {
        let a = Profile::from_callgrind(CG, 2, ROOT).unwrap();
        let mut b = a.clone();
        b.stacks.insert("pb_run;decode".into(), 900); // +200/op
        b.stacks.insert("pb_run;malloc".into(), 70); // -10/op
        let d = diff(&a, &b, 10);
        assert_eq!(d.functions[0].function, "decode");
        assert_eq!(d.functions[0].self_diff, 200.0);
        assert_eq!(d.functions[0].inclusive_diff, 200.0);
        assert_eq!(d.functions[1].function, "malloc");
        let shares: f64 = d.functions.iter().map(|f| f.share).sum();
        assert!((shares - 1.0).abs() < 1e-9);
        assert_eq!(d.total_after - d.total_before, 190.0);
        assert_eq!(diff(&a, &b, 1).functions.len(), 1);
    }
}
