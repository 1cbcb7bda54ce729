//! The Markdown result of a bisect, and the Text and Markdown exports.

use super::*;

pub(super) fn markdown(j: &BisectReport, links: &Links) -> String {
    let mut s = format!(
        "### perfbisect: `{}` at {} thread(s), `{}`\n\n",
        j.tool,
        j.threads_label(),
        j.range
    );
    // The answer first, as in text; the figures and the method under "details".
    s.push_str(&answer(j).markdown(links));
    s.push_str("\n<details><summary>method and figures</summary>\n\n");
    s.push_str(&format!(
        "Ends{}: `{}` {} {u} → `{}` {} {u}: **{}** {} (p={:.2e})\n\n",
        j.at_threads(),
        j.good.short,
        us(j.ends.a.mean),
        j.bad.short,
        us(j.ends.b.mean),
        direction_word(j.direction),
        j.ends.ratio.pct(),
        j.ends.p_welch,
        u = j.metric.unit()
    ));
    if let Some(l) = j.located_sentence() {
        s.push_str(&format!("Search: {l}\n\n"));
    }
    if let Some(r) = &j.resolution {
        s.push_str(&format!("Resolution: {}\n\n", resolution_sentence(r)));
    }
    if j.change_points().any(|c| !c.per_threads.is_empty()) {
        s.push_str(&per_threads_markdown(j, links));
    }
    s.push_str(&Aside::of(&j.changes).markdown());
    let left = unexplored_text(j);
    if !left.is_empty() {
        s.push_str(&format!("```\n{}```\n\n", left.trim_start()));
    }
    let control = error_control_text(j);
    if !control.is_empty() {
        s.push_str(&format!("```\n{control}```\n\n"));
    }
    s.push_str(&steps_markdown(j, links));
    s.push_str(&format!("\n</details>\n\nReproduce: `{}`\n", j.reproduce));
    s
}

pub(super) fn per_threads_markdown(j: &BisectReport, links: &Links) -> String {
    let rows = j.change_points().flat_map(|c| {
        c.per_threads.iter().map(|e| {
            vec![
                links.markdown(&c.info.commit, &c.info.commit[..10]),
                e.threads.to_string(),
                us(e.a_mean_us),
                us(e.b_mean_us),
                e.comparison.ratio.pct(),
                (if e.affected { "**yes**" } else { "no" }).to_string(),
            ]
        })
    });
    let t = Table::new(&[
        "commit",
        "threads",
        "parent µs/op",
        "commit µs/op",
        "change",
        "affected",
    ]);
    t.right(&[1, 2, 3]).with_rows(rows).markdown() + "\n"
}

/// The tested commits, as a table of the details.
pub(super) fn steps_markdown(j: &BisectReport, links: &Links) -> String {
    let u = j.steps_metric().unit();
    let rows = j.steps.iter().map(|st| {
        vec![
            links.markdown(&st.info.commit, &st.info.short),
            st.n.to_string(),
            us(st.mean_us),
            st.verdict.to_string(),
        ]
    });
    let t = Table::new(&["commit", "n", &format!("mean {u}"), "verdict"]).right(&[1, 2]);
    format!("Tested commits:\n\n{}", t.with_rows(rows).markdown())
}

impl Export<BisectReport> for Text {
    fn export(&self, r: &BisectReport) -> Result<String> {
        Ok(answer(r).text(&Links::default()))
    }

    fn export_linked(&self, r: &BisectReport, links: &Links) -> Result<String> {
        Ok(answer(r).text(links))
    }
}

impl Export<BisectReport> for Markdown {
    fn export(&self, r: &BisectReport) -> Result<String> {
        Ok(markdown(r, &Links::default()))
    }

    fn export_linked(&self, r: &BisectReport, links: &Links) -> Result<String> {
        Ok(markdown(r, links))
    }
}
