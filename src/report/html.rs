//! One static page from any mix of results (`report html`): each result
//! type gives its [`Section`] (summary, tables, plots, how to reproduce)
//! and the page puts every result's summary first, then the tables, then
//! the plots, then the commands. Self-contained: inline CSS and SVG, no
//! script, nothing fetched.

use anyhow::Result;

use super::export::{Export, Html, Links};

pub use super::export::esc;

/// One result's parts of the page; every string is HTML, already escaped.
pub struct Section {
    pub heading: String,
    pub summary: String,
    pub tables: String,
    /// Empty when the result has nothing to plot.
    pub plots: String,
    pub reproduce: String,
}

pub trait HtmlSections {
    fn section(&self, links: &Links) -> Result<Section>;
}

impl<R: HtmlSections> Export<R> for Html {
    fn export(&self, r: &R) -> Result<String> {
        self.export_linked(r, &Links::default())
    }

    fn export_linked(&self, r: &R, links: &Links) -> Result<String> {
        Ok(page(&[r.section(links)?]))
    }
}

/// A verdict word in its colour: red for slower, green for faster.
pub fn badge(word: &str) -> String {
    let class = match word {
        "slower" | "regression" | "slowdown" => "bad",
        "faster" | "improvement" | "speed-up" => "good",
        "undecided" | "uncertain" | "error" => "warn",
        _ => "neutral",
    };
    format!("<span class=\"badge {class}\">{}</span>", esc(word))
}

/// An inline SVG with its caption.
pub fn figure(svg: &str, caption: &str) -> String {
    format!(
        "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
        svg.trim(),
        esc(caption)
    )
}

/// A shell command to copy.
pub fn command(cmd: &str) -> String {
    format!("<pre><code>{}</code></pre>\n", esc(cmd))
}

const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; margin: 0 auto; max-width: 1060px; padding: 1.5rem; color: #1f2328; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.3rem; border-bottom: 1px solid #d0d7de; padding-bottom: 0.3rem; margin-top: 2.2rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 0.5rem; }
.meta { color: #59636e; margin-top: 0; }
.card { border: 1px solid #d0d7de; border-radius: 6px; padding: 0.6rem 1rem; margin: 0.8rem 0; }
.card h3 { margin-top: 0.3rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em; }
pre { background: #f6f8fa; padding: 0.6rem 0.8rem; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
figure { margin: 1rem 0 2rem; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
figcaption { color: #59636e; font-size: 0.9rem; }
.badge { display: inline-block; padding: 0 0.45rem; border-radius: 1rem; font-size: 0.8rem; font-weight: 600; }
.bad { background: #ffebe9; color: #a40e26; }
.good { background: #dafbe1; color: #116329; }
.warn { background: #fff8c5; color: #7d4e00; }
.neutral { background: #eaeef2; color: #424a53; }
a { color: #0969da; }
footer { margin-top: 3rem; color: #59636e; font-size: 0.85rem; }
";

/// The page: all summaries, all tables, all plots, all commands.
pub fn page(sections: &[Section]) -> String {
    let mut s = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>perfbisect report</title>\n<style>");
    s.push_str(STYLE);
    s.push_str("</style>\n</head>\n<body>\n<header>\n<h1>perfbisect report</h1>\n");
    s.push_str(&format!(
        "<p class=\"meta\">{} result(s): {}</p>\n</header>\n",
        sections.len(),
        sections
            .iter()
            .map(|x| x.heading.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    ));
    s.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    for x in sections {
        s.push_str(&format!(
            "<div class=\"card\">\n<h3>{}</h3>\n{}</div>\n",
            x.heading, x.summary
        ));
    }
    s.push_str("</section>\n<section id=\"tables\">\n<h2>Tables</h2>\n");
    for x in sections {
        s.push_str(&format!("<h3>{}</h3>\n{}", x.heading, x.tables));
    }
    s.push_str("</section>\n");
    if sections.iter().any(|x| !x.plots.is_empty()) {
        s.push_str("<section id=\"plots\">\n<h2>Plots</h2>\n");
        for x in sections.iter().filter(|x| !x.plots.is_empty()) {
            s.push_str(&format!("<h3>{}</h3>\n{}", x.heading, x.plots));
        }
        s.push_str("</section>\n");
    }
    s.push_str("<section id=\"reproduce\">\n<h2>How to reproduce</h2>\n");
    for x in sections {
        s.push_str(&format!("<h3>{}</h3>\n{}", x.heading, x.reproduce));
    }
    s.push_str(&format!(
        "</section>\n<footer>Made by perfbisect {}.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn commit_links_only_for_shas() {
        let l = Links::new(Some("https://example.org/c/{sha}?a=1&b=2")).unwrap();
        assert_eq!(
            l.html("0123456789abcdef", "0123456789"),
            "<a href=\"https://example.org/c/0123456789abcdef?a=1&amp;b=2\"><code>0123456789</code></a>"
        );
        assert_eq!(
            l.html("openssl-3.0.0", "openssl-3.0.0"),
            "<code>openssl-3.0.0</code>"
        );
        assert!(Links::new(Some("https://example.org/")).is_err());
        assert_eq!(
            Links::default().markdown("0123456789abcdef", "0123456789"),
            "`0123456789`"
        );
    }
}
