//! The HTML result of a scan.

use super::*;
use crate::report::Cell;

impl HtmlSections for ScanReport {
    fn section(&self, links: &Links) -> Result<Section> {
        let r = self;
        let heading = format!(
            "scan: <code>{}</code> at {} thread(s), <code>{}</code>",
            esc(&r.tool),
            r.threads,
            esc(&r.range)
        );
        let mut tables = String::new();
        tables.push_str(&r.grid_table_html(links));
        tables.push_str(&r.intervals_table_html(links));
        tables.push_str(&format!(
            "<p>{}.</p>\n<p>{}.</p>\n",
            esc(&r.cost()),
            esc(&r.error_control())
        ));
        let plots = html::figure(
            &r.profile_svg()?,
            &format!(
                "scan of {} at {} thread(s) over {}: {} (95% interval) of every grid point (ringed) and every commit a search tested, each in the colour of the level it sits on between the change points; blue bands are the fitted levels, dashed red lines the confirmed change points, grey dotted ones located changes of unresolved size, shaded stretches were not tested.",
                r.tool, r.threads, r.range, r.grid_metric().unit()
            ),
        );
        Ok(Section {
            heading,
            summary: format!(
                "{}<details><summary>method and figures</summary>\n{}</details>\n",
                super::text::answer(r).html(links),
                r.summary_html(links)
            ),
            tables,
            plots,
            reproduce: html::command(&r.reproduce),
        })
    }
}

impl ScanReport {
    /// The section's opening prose: the grid's shape, the confirmed change points largest
    /// first, what cancels, and what did not hold or may hide.
    pub(super) fn summary_html(&self, links: &Links) -> String {
        let r = self;
        let searched = r.intervals.iter().filter(|i| i.entered).count();
        let mut summary = format!(
            "<p>{} commits; a grid of {} points ({} of its builds were cached), {} samples each; {} fitted level(s); {searched} of {} grid intervals searched.</p>\n",
            r.commits,
            r.grid.len(),
            r.grid_builds_cached,
            r.samples_per_grid_point,
            r.segments.len(),
            r.intervals.len()
        );
        if let Some(l) = &r.located {
            summary.push_str(&format!("<p>Search: {}</p>\n", esc(&l.sentence())));
        }
        if let Some(res) = &r.resolution {
            summary.push_str(&format!(
                "<p>Resolution: {}</p>\n",
                esc(&resolution_sentence(res))
            ));
        }
        summary.push_str(&r.confirmed_list_html(links));
        for c in &r.cancels {
            summary.push_str(&format!("<p>{}</p>\n", esc(&c.text)));
        }
        for x in &r.series {
            summary.push_str(&format!("<p>Series: {}</p>\n", esc(&x.text)));
        }
        summary.push_str(&r.aside().html());
        if let Some(n) = r.hidden_note() {
            summary.push_str(&format!("<p class=\"meta\">{}</p>\n", esc(&n)));
        }
        let left = r.left_lines();
        if !left.is_empty() {
            let list = List::bullets(left.iter().map(|l| esc(l))).html();
            summary.push_str(&format!("<p>{}:</p>\n{list}", esc(LEFT_IN_TIME)));
        }
        summary
    }

    pub(super) fn confirmed_list_html(&self, links: &Links) -> String {
        let confirmed: Vec<usize> = (self.by_share.iter().copied())
            .filter(|&i| self.changes[i].point.confirmed)
            .collect();
        if confirmed.is_empty() {
            return "<p>No confirmed change point.</p>\n".to_string();
        }
        let items = confirmed.iter().map(|&i| {
            let c = &self.changes[i];
            let p = &c.point;
            let word = if p.ratio > 1.0 { "slower" } else { "faster" };
            format!(
                "{} {}: <b>{}</b> ({}): {} → {} {}, <b>{}</b> [{:+.1}%, {:+.1}%], {:.0}% of the movement",
                html::badge(word),
                links.html(&p.info.commit, &p.info.short),
                esc(&p.info.subject),
                esc(&p.info.dates()),
                us(p.parent_mean_us),
                us(p.culprit_mean_us),
                self.metric.unit(),
                esc(&ratio_pct(p.ratio)),
                (p.ratio_ci.0 - 1.0) * 100.0,
                (p.ratio_ci.1 - 1.0) * 100.0,
                c.share_of_movement.abs() * 100.0
            )
        });
        format!(
            "<p>Change points, lasting effect first:</p>\n{}",
            List::numbered(items).html()
        )
    }

    pub(super) fn grid_table_html(&self, links: &Links) -> String {
        let rows = self.grid.iter().map(|g| {
            vec![
                g.index.to_string().into(),
                Cell::commit(&g.info.commit, &g.info.short),
                g.info.dates().into(),
                g.info.subject.clone().into(),
                g.n.to_string().into(),
                g.mean_us.map(us).unwrap_or_else(|| "-".into()).into(),
                g.ci95_us
                    .map(|c| format!("{} – {}", us(c.0), us(c.1)))
                    .unwrap_or_else(|| {
                        (g.skipped.as_ref()).map_or("-".into(), Unavailable::to_string)
                    })
                    .into(),
                g.segment
                    .map(|s| (s + 1).to_string())
                    .unwrap_or_default()
                    .into(),
            ]
        });
        let mut s = String::from("<p>Grid (old end first):</p>\n");
        s.push_str(
            &Table::new(&[
                "position",
                "commit",
                "date",
                "subject",
                "n",
                &format!("mean {}", self.grid_metric().unit()),
                "95% CI",
                "level",
            ])
            .numeric_from(4)
            .with_cells(links, rows)
            .html(),
        );
        s
    }

    pub(super) fn intervals_table_html(&self, links: &Links) -> String {
        let rows = self.intervals.iter().map(|iv| {
            vec![
                Cell::commit(&self.grid_commit(iv.lo), &iv.lo_short),
                Cell::commit(&self.grid_commit(iv.hi), &iv.hi_short),
                (iv.hi - iv.lo).to_string().into(),
                ratio_pct(iv.fitted_ratio).into(),
                iv.outcome.clone().into(),
            ]
        });
        let mut s = String::from("<p>Grid intervals:</p>\n");
        s.push_str(
            &Table::new(&["from", "to", "commits", "fitted", "outcome"])
                .numeric_from(2)
                .with_cells(links, rows)
                .html(),
        );
        s
    }
}
