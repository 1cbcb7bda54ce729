//! The result of `explain`: the functions whose instructions per operation
//! changed most between two builds, and the differential flame graph.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::export::{formats, Export, Markdown, Text};
use crate::analysis::profile::{Profile, ProfileDiff};
use crate::report::Table;

formats!(ExplainFormat for ExplainReport { Text, Markdown, Json });

pub const EXPLAIN_KIND: &str = "perfbisect-explain";

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExplainReport {
    pub kind: String,
    pub tool: String,
    pub before: String,
    pub after: String,
    pub before_commit: String,
    pub after_commit: String,
    /// Operations each profile covers.
    pub ops_before: u64,
    pub ops_after: u64,
    /// "callgrind".
    pub source: String,
    pub unit: String,
    #[serde(flatten)]
    pub diff: ProfileDiff,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flamegraph: Option<String>,
}

fn count(v: f64) -> String {
    if v.abs() >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", count(v))
    } else {
        count(v)
    }
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:+.1}%", v * 100.0)
    } else {
        "-".into()
    }
}

/// One side of an explanation: its label and commit.
pub struct Side<'a> {
    pub label: &'a str,
    pub commit: &'a str,
}

impl ExplainReport {
    pub fn new(
        tool: &str,
        before: Side,
        after: Side,
        profiles: (&Profile, &Profile),
        top: usize,
    ) -> ExplainReport {
        ExplainReport {
            kind: EXPLAIN_KIND.into(),
            tool: tool.to_string(),
            before: before.label.to_string(),
            after: after.label.to_string(),
            before_commit: before.commit.to_string(),
            after_commit: after.commit.to_string(),
            ops_before: profiles.0.ops,
            ops_after: profiles.1.ops,
            source: "callgrind".into(),
            unit: crate::measure::metric::Metric::Instructions.unit().into(),
            diff: crate::analysis::profile::diff(profiles.0, profiles.1, top),
            flamegraph: None,
        }
    }

    /// Writes the differential flame graph and records where.
    pub fn write_flamegraph(
        &mut self,
        path: &std::path::Path,
        profiles: (&Profile, &Profile),
    ) -> Result<()> {
        let title = format!(
            "{}: {} -> {} (instructions per operation)",
            self.tool, self.before, self.after
        );
        let svg = differential_svg(profiles.0, profiles.1, &title)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
        self.flamegraph = Some(path.display().to_string());
        Ok(())
    }

    fn headline(&self) -> String {
        let (a, b) = (self.diff.total_before, self.diff.total_after);
        format!(
            "{}: {} {} -> {} {} instructions/op ({}, {})",
            self.tool,
            self.before,
            count(a),
            self.after,
            count(b),
            signed(b - a),
            pct(if a > 0.0 { b / a - 1.0 } else { f64::NAN })
        )
    }

    fn table(&self) -> Table {
        let mut t = Table::new(&[
            "function",
            "self before",
            "self after",
            "self diff",
            "incl before",
            "incl after",
            "incl diff",
            "share of change",
        ])
        .numeric_from(1);
        for f in &self.diff.functions {
            t.push(vec![
                f.function.clone(),
                count(f.self_before),
                count(f.self_after),
                signed(f.self_diff),
                count(f.inclusive_before),
                count(f.inclusive_after),
                signed(f.inclusive_diff),
                pct(f.share),
            ]);
        }
        t
    }

    fn footer(&self) -> String {
        let mut s = format!(
            "per operation, from callgrind profiles of {} and {} operations; self = the function's own instructions, incl = with its callees; share = self diff / total change",
            self.ops_before, self.ops_after
        );
        if let Some(f) = &self.flamegraph {
            s.push_str(&format!("\ndifferential flame graph: {f}"));
        }
        s
    }
}

impl Export<ExplainReport> for Text {
    fn export(&self, r: &ExplainReport) -> Result<String> {
        Ok(format!(
            "{}\n\n{}\n{}\n",
            r.headline(),
            r.table().text(),
            r.footer()
        ))
    }
}

impl Export<ExplainReport> for Markdown {
    fn export(&self, r: &ExplainReport) -> Result<String> {
        Ok(format!(
            "### perfbisect explain: {}\n\n{}\n{}\n",
            r.headline(),
            r.table().markdown(),
            r.footer()
        ))
    }
}

/// A differential flame graph (inferno): colour is the change from `before` to `after` (red
/// more instructions per operation, blue fewer). The frames and widths are the larger
/// profile's, so the code a change removed (a speed-up) or added (a slowdown) is drawn.
pub fn differential_svg(before: &Profile, after: &Profile, title: &str) -> Result<String> {
    let (b, a) = (before.folded_per_op(), after.folded_per_op());
    let shrank = (after.total() as f64 / after.ops.max(1) as f64)
        < (before.total() as f64 / before.ops.max(1) as f64);
    // inferno draws its second input; drawing `before` means swapping the inputs and the hues.
    let (first, second) = if shrank { (&a, &b) } else { (&b, &a) };
    let mut folded = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        first.as_bytes(),
        second.as_bytes(),
        &mut folded,
    )
    .context("cannot build the differential stacks")?;
    let folded = String::from_utf8(folded).context("differential stacks are not UTF-8")?;
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "instructions/op".into();
    opts.negate_differentials = shrank;
    opts.subtitle = Some(format!(
        "red: more instructions per operation than before, blue: fewer; widths: the {} profile",
        if shrank { "before" } else { "after" }
    ));
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, folded.lines(), &mut svg)
        .context("cannot render the flame graph")?;
    let svg = String::from_utf8(svg).context("flame graph is not UTF-8")?;
    let per_op = |p: &Profile| p.total() as f64 / p.ops.max(1) as f64;
    Ok(mark_total(svg, per_op(before), per_op(after)))
}

/// The root frame ("all") coloured and titled by the total change. inferno colours a frame
/// by its own instructions' change, and the root has none (it was drawn white, or in the
/// palette's red, whatever the total did).
fn mark_total(svg: String, before: f64, after: f64) -> String {
    let Some(at) = svg.find("<title>all (") else {
        return svg;
    };
    let Some(close) = svg[at..].find(")</title>").map(|i| at + i) else {
        return svg;
    };
    let Some(fill) = svg[close..].find("fill=\"rgb(").map(|i| close + i + 6) else {
        return svg;
    };
    let Some(fill_end) = svg[fill..].find('"').map(|i| fill + i) else {
        return svg;
    };
    let change = if before > 0.0 {
        after / before - 1.0
    } else {
        0.0
    };
    // inferno's scale: 250 for no change, down to 100 for the largest.
    let c = (250.0 - 150.0 * change.abs().min(1.0)).round() as u8;
    let colour = match change {
        x if x > 0.0 => format!("rgb(255,{c},{c})"),
        x if x < 0.0 => format!("rgb({c},{c},255)"),
        _ => "rgb(250,250,250)".to_string(),
    };
    let title = format!(
        "; total {:+.1}%: {} -> {}",
        change * 100.0,
        before.round(),
        after.round()
    );
    format!(
        "{}{title}{}{colour}{}",
        &svg[..close],
        &svg[close..fill],
        &svg[fill_end..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::profile::diff;
    use std::collections::BTreeMap;

    fn profile(stacks: &[(&str, u64)]) -> Profile {
        Profile {
            stacks: stacks
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect::<BTreeMap<_, _>>(),
            ops: 2,
        }
    }

    #[test]
    fn explain_renders_table_and_flamegraph() {
        let a = profile(&[("pb_run;decode", 1000), ("pb_run;decode;lookup", 400)]);
        let b = profile(&[("pb_run;decode", 1000), ("pb_run;decode;lookup", 100)]);
        let r = ExplainReport {
            kind: EXPLAIN_KIND.into(),
            tool: "pkeyread".into(),
            before: "v1".into(),
            after: "v2".into(),
            before_commit: "a".into(),
            after_commit: "b".into(),
            ops_before: 2,
            ops_after: 2,
            source: "callgrind".into(),
            unit: "instructions/op".into(),
            diff: diff(&a, &b, 5),
            flamegraph: Some("x.svg".into()),
        };
        let t = Text.export(&r).unwrap();
        assert!(
            t.contains("v1 700 -> v2 550 instructions/op (-150, -21.4%)"),
            "{t}"
        );
        assert!(t.contains("lookup"), "{t}");
        assert!(t.contains("+100.0%"), "{t}");
        let m = Markdown.export(&r).unwrap();
        assert!(m.contains("| lookup |"), "{m}");
        let j: serde_json::Value =
            serde_json::from_str(&crate::report::export::Json.export(&r).unwrap()).unwrap();
        assert_eq!(j["functions"][0]["function"], "lookup");
        assert_eq!(j["functions"][0]["self_diff"], -150.0);
        assert_eq!(j["total_before"], 700.0);
        let svg = differential_svg(&a, &b, "demo").unwrap();
        assert!(
            svg.starts_with("<?xml") && svg.contains("lookup"),
            "{}",
            &svg[..200]
        );
        // The root shows the total: 700 -> 550 instructions/op is blue, the reverse red.
        assert!(
            svg.contains(
                "<title>all (700 instructions/op, 100%; total -21.4%: 700 -> 550)</title>"
            ),
            "{svg}"
        );
        assert!(root_fill(&svg).ends_with(",255)"), "{}", root_fill(&svg));
        let grew = differential_svg(&b, &a, "demo").unwrap();
        assert!(
            root_fill(&grew).starts_with("rgb(255,"),
            "{}",
            root_fill(&grew)
        );
        let same = differential_svg(&a, &a, "demo").unwrap();
        assert_eq!(root_fill(&same), "rgb(250,250,250)");
    }

    /// callgrind's output for 1000 operations of pkeyread-like code: the measured function's
    /// own instructions, pb_run's, two decoder functions' and a chain callgrind cut short.
    fn callgrind(own: u64, decode: u64, setup: u64) -> Profile {
        let ctx = "pb_run'perfbisect_measured_run'closure'start";
        let text = format!(
            "events: Ir\n\
             fn=(1) perfbisect_measured_run'closure'start\n0 {own}\n\
             fn=(2) {ctx}\n0 20000\n\
             fn=(3) decoder_process'OSSL_DECODER_from_bio'{ctx}\n0 {decode}\n\
             fn=(4) ossl_decoder_ctx_setup'OSSL_DECODER_from_bio'{ctx}\n0 {setup}\n\
             fn=(5) memcpy'a'b\n0 7000\n"
        );
        Profile::from_callgrind(&text, 1000, "perfbisect_measured_run").unwrap()
    }

    /// Every frame's title and fill, in the SVG's order.
    fn frames(svg: &str) -> Vec<(&str, (u8, u8, u8))> {
        svg.split("<g><title>")
            .skip(1)
            .map(|g| {
                let title = &g[..g.find("</title>").unwrap()];
                let fill = g.split("fill=\"rgb(").nth(1).unwrap();
                let c: Vec<u8> = fill[..fill.find(')').unwrap()]
                    .split(',')
                    .map(|v| v.parse().unwrap())
                    .collect();
                (title, (c[0], c[1], c[2]))
            })
            .collect()
    }

    /// The reported case, pkeyread 3.0.8 -> 3.1.4 at 78% fewer instructions per operation:
    /// every frame is drawn in the differential scale (red more, blue fewer, white the same),
    /// the root by the total. The measured function's own instructions once made a frame with
    /// no name and no difference, drawn in the palette's red (rgb(227,0,7)) whatever the total
    /// did.
    #[test]
    fn every_frame_shows_its_own_change() {
        let before = callgrind(3000, 700_000, 270_000);
        let after = callgrind(3000, 190_000, 0);
        let shade = |(r, g, b): (u8, u8, u8)| {
            (r == 255 && g == b) || (b == 255 && r == g) || (r, g, b) == (250, 250, 250)
        };
        let blue = |(r, g, b): (u8, u8, u8)| b == 255 && r == g && r < 250;
        let red = |(r, g, b): (u8, u8, u8)| r == 255 && g == b && g < 250;
        let fell = differential_svg(&before, &after, "pkeyread").unwrap();
        let fell = frames(&fell);
        for (title, fill) in &fell {
            assert!(shade(*fill), "{title}: {fill:?}");
        }
        let root =
            |f: &[(&str, (u8, u8, u8))]| f.iter().find(|(t, _)| t.starts_with("all (")).unwrap().1;
        assert!(blue(root(&fell)), "{fell:?}");
        assert!(
            fell.iter()
                .any(|(t, _)| t.starts_with("perfbisect_measured_run (3 ")),
            "{fell:?}"
        );
        let rose = differential_svg(&after, &before, "pkeyread").unwrap();
        let rose = frames(&rose);
        for (title, fill) in &rose {
            assert!(shade(*fill), "{title}: {fill:?}");
        }
        assert!(red(root(&rose)), "{rose:?}");
        // In proportion: a smaller fall is a paler blue.
        let less = differential_svg(&before, &callgrind(3000, 600_000, 270_000), "x").unwrap();
        let less = frames(&less);
        assert!(
            blue(root(&less)) && root(&less).0 > root(&fell).0,
            "{less:?}"
        );
    }

    fn root_fill(svg: &str) -> &str {
        let at = svg.find("<title>all (").expect("a root frame");
        let fill = at + svg[at..].find("fill=\"").expect("its rect") + 6;
        &svg[fill..fill + svg[fill..].find('"').unwrap()]
    }
}
