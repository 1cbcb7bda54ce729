//! The Markdown result of a scan, and the Text and Markdown exports.

use super::*;

pub(super) fn markdown(r: &ScanReport, links: &Links) -> String {
    let mut s = format!(
        "### scan: `{}` at {} thread(s), `{}` ({} commits)\n\n",
        r.tool, r.threads, r.range, r.commits
    );
    // The answer first; the method and the figures behind it under "details".
    s.push_str(&super::text::answer(r).markdown(links));
    s.push_str("\n<details><summary>method and figures</summary>\n\n");
    s.push_str(&r.aside().markdown());
    if let Some(l) = &r.located {
        s.push_str(&format!("Search: {}\n\n", l.sentence()));
    }
    if let Some(res) = &r.resolution {
        s.push_str(&format!("Resolution: {}\n\n", resolution_sentence(res)));
    }
    let cancels = r.cancels.iter().map(|c| c.text.clone());
    let series = r.series.iter().map(|x| format!("series: {}", x.text));
    s.push_str(&List::bullets(cancels.chain(series)).markdown());
    if !r.cancels.is_empty() {
        s.push('\n');
    }
    // The intervals' outcomes are not in Markdown: what their searches left is said here.
    let inside = (r.intervals.iter()).flat_map(|iv| iv.left.iter().map(UnexploredJson::text));
    let inside = List::bullets(inside);
    if !inside.items.is_empty() {
        s.push_str("Left unexplored inside the searched intervals:\n\n");
        s.push_str(&inside.markdown());
        s.push('\n');
    }
    s.push_str(&markdown_grid(r, links));
    if let Some(n) = r.hidden_note() {
        s.push_str(&format!("{n}.\n\n"));
    }
    for n in &r.notes {
        s.push_str(&format!("{n}\n\n"));
    }
    let left = r.left_lines();
    if !left.is_empty() {
        let list = List::bullets(left).markdown();
        s.push_str(&format!("{LEFT_IN_TIME}:\n\n{list}\n"));
    }
    s.push_str(&format!("{}.\n\n</details>\n\n", r.error_control()));
    s.push_str(&format!("```\n{}\n```\n", r.reproduce));
    s
}

/// The grid and its fitted levels, folded away in a `<details>` block.
pub(super) fn markdown_grid(r: &ScanReport, links: &Links) -> String {
    let mut s = String::new();
    s.push_str("<details><summary>grid and fitted levels</summary>\n\n");
    let u = r.grid_metric().unit();
    let rows = r.grid.iter().map(|g| {
        let (m, ci) = match (g.mean_us, g.ci95_us) {
            (Some(m), Some(ci)) => (us(m), format!("[{}, {}]", us(ci.0), us(ci.1))),
            _ => ("-".into(), g.skipped_text()),
        };
        vec![
            g.index.to_string(),
            links.markdown(&g.info.commit, &g.info.short),
            g.info.date.clone(),
            m,
            ci,
            g.segment.map(|i| (i + 1).to_string()).unwrap_or("-".into()),
        ]
    });
    let t = Table::new(&["index", "commit", "date", u, "95% interval", "level"]);
    s.push_str(&t.right(&[0, 3, 5]).with_rows(rows).markdown());
    s.push('\n');
    let levels = r.segments.iter().enumerate().map(|(i, g)| {
        format!(
            "level {}: `{}`..`{}` ({} points): {} {u} [{}, {}]",
            i + 1,
            g.first_short,
            g.last_short,
            g.points,
            us(g.level_us),
            us(g.ci95_us.0),
            us(g.ci95_us.1)
        )
    });
    s.push_str(&List::bullets(levels).markdown());
    s.push_str("\n</details>\n\n");
    s
}

impl Export<ScanReport> for Text {
    fn export(&self, r: &ScanReport) -> Result<String> {
        Ok(text(r, &Links::default()))
    }
    fn export_linked(&self, r: &ScanReport, links: &Links) -> Result<String> {
        Ok(text(r, links))
    }
}

impl Export<ScanReport> for Markdown {
    fn export(&self, r: &ScanReport) -> Result<String> {
        Ok(markdown(r, &Links::default()))
    }
    fn export_linked(&self, r: &ScanReport, links: &Links) -> Result<String> {
        Ok(markdown(r, links))
    }
}
