//! The Makefile OpenSSL's configure generates, read the way make reads it, as far as perfbisect
//! needs: its variables (`NAME=value`, continuation lines joined) and its explicit rules (targets,
//! prerequisites, recipe), above the dependency lines `make depend` appends below
//! `# DO NOT DELETE THIS LINE`. OpenSSL writes one explicit rule per object, library and
//! generated file, with no conditionals, includes or pattern rules, so this small reader sees
//! what make sees; anything it does not understand (a function call, a pattern rule) is kept as
//! text, never guessed at.

use std::collections::{BTreeSet, HashMap};

/// The line OpenSSL's Makefile templates put above the dependency lines.
pub const DEPEND_MARKER: &str = "# DO NOT DELETE THIS LINE";

/// One explicit rule, as written (variables not expanded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rule {
    pub prerequisites: Vec<String>,
    pub recipe: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Makefile {
    /// Raw values; the first assignment of a name wins, as in the helpers this replaced.
    vars: HashMap<String, String>,
    /// Rules above the dependency marker, by target. A target named by several rule lines gets
    /// their prerequisites together and the recipe of the one that has one.
    rules: HashMap<String, Rule>,
    /// Names on `.PHONY:` lines.
    phony: BTreeSet<String>,
}

impl Makefile {
    pub fn parse(text: &str) -> Makefile {
        let mut m = Makefile::default();
        let mut below_marker = false;
        // The target(s) whose recipe the following tab-indented lines belong to.
        let mut current: Vec<String> = Vec::new();
        let mut lines = text.lines();
        while let Some(first) = lines.next() {
            if first.starts_with(DEPEND_MARKER) {
                below_marker = true;
                current.clear();
                continue;
            }
            if let Some(cmd) = first.strip_prefix('\t') {
                let mut cmd = cmd.to_string();
                while cmd.ends_with('\\') {
                    match lines.next() {
                        Some(next) => {
                            cmd.push('\n');
                            cmd.push_str(next);
                        }
                        None => break,
                    }
                }
                if !below_marker {
                    for t in &current {
                        m.rules
                            .entry(t.clone())
                            .or_default()
                            .recipe
                            .push(cmd.clone());
                    }
                }
                continue;
            }
            let mut line = first.to_string();
            while let Some(head) = line.strip_suffix('\\') {
                line = format!("{head} {}", lines.next().unwrap_or_default());
            }
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some((name, value)) = assignment(&line) {
                m.vars
                    .entry(name.to_string())
                    .or_insert_with(|| value.to_string());
                current.clear();
                continue;
            }
            let Some((targets, prereqs)) = rule_line(&line) else {
                current.clear();
                continue;
            };
            // Order-only prerequisites (after `|`) never make a target out of date.
            let prereqs = prereqs.split('|').next().unwrap_or_default();
            let prereqs: Vec<String> = prereqs.split_whitespace().map(String::from).collect();
            current = targets.split_whitespace().map(String::from).collect();
            for t in &current {
                if t == ".PHONY" {
                    m.phony.extend(prereqs.iter().cloned());
                } else if below_marker {
                    // `make depend`'s copy of the `.d` files: read from those, where the
                    // compiler writes them first (the copy lags by one make).
                } else {
                    m.rules
                        .entry(t.clone())
                        .or_default()
                        .prerequisites
                        .extend(prereqs.iter().cloned());
                }
            }
            if below_marker || current.iter().any(|t| t == ".PHONY") {
                current.clear();
            }
        }
        m
    }

    /// The raw value of a variable, continuation lines joined.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The words of a variable, quotes removed, `$(VAR)` references expanded: 1.1.1 writes
    /// `SHLIBS=libcrypto$(SHLIB_EXT) …`, and make does not expand targets given on its command
    /// line.
    pub fn words(&self, name: &str) -> Option<Vec<String>> {
        let value = self.expand(self.value(name)?);
        Some(
            value
                .split_whitespace()
                .map(|w| w.trim_matches('"').to_string())
                .filter(|w| !w.is_empty())
                .collect(),
        )
    }

    /// `$(VAR)` and `${VAR}` replaced by their values (recursively, as make's `=` variables
    /// are); an unknown variable is empty, as in make; a function call (`$(wildcard …)`) and an
    /// automatic variable (`$@`) stay as they are written. `$$` becomes `$`.
    pub fn expand(&self, value: &str) -> String {
        self.expand_at(value, 0)
    }

    fn expand_at(&self, value: &str, depth: usize) -> String {
        const MAX_DEPTH: usize = 16;
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let (open, close) = match after.chars().next() {
                Some('(') => ('(', ')'),
                Some('{') => ('{', '}'),
                Some('$') => {
                    out.push('$');
                    rest = &after[1..];
                    continue;
                }
                _ => {
                    out.push('$');
                    rest = after;
                    continue;
                }
            };
            let Some(end) = matching(after, open, close) else {
                out.push_str(&rest[i..]);
                return out;
            };
            let inner = &after[1..end];
            if inner.contains(|c: char| c.is_whitespace() || c == ',') {
                // A function call: kept, its arguments expanded.
                out.push('$');
                out.push(open);
                out.push_str(&self.expand_at(inner, depth + 1));
                out.push(close);
            } else if depth < MAX_DEPTH {
                if let Some(v) = self.vars.get(inner) {
                    out.push_str(&self.expand_at(v, depth + 1));
                }
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }

    /// Every explicit target above the dependency marker.
    pub fn targets(&self) -> impl Iterator<Item = &str> {
        self.rules.keys().map(String::as_str)
    }

    /// A rule with its variables expanded: what make would run and check. Two Makefiles whose
    /// expanded rules for a target are equal build that target the same way.
    pub fn expanded_rule(&self, target: &str) -> Option<Rule> {
        let r = self.rules.get(target)?;
        Some(Rule {
            prerequisites: r
                .prerequisites
                .iter()
                .flat_map(|p| {
                    self.expand(p)
                        .split_whitespace()
                        .map(String::from)
                        .collect::<Vec<_>>()
                })
                .collect(),
            recipe: r.recipe.iter().map(|c| self.expand(c)).collect(),
        })
    }

    pub fn is_phony(&self, target: &str) -> bool {
        self.phony.contains(target)
    }
}

/// `NAME=value` (also `:=`, `?=`, `+=`): a name of letters, digits and `_`, then the operator.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let eq = line.find('=')?;
    let name = line[..eq].trim_end_matches([':', '?', '+']).trim_end();
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    // `a.o: b.c` has no '='; `x: A=b` (a target-specific variable) has ':' before it.
    (ok && !line[..eq].contains(": ") && !line[..eq].ends_with("::"))
        .then(|| (name, line[eq + 1..].trim_start()))
}

/// `targets: prerequisites` (not `::`, not a pattern rule).
fn rule_line(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let (targets, rest) = (&line[..colon], &line[colon + 1..]);
    if targets.trim().is_empty()
        || targets.contains('%')
        || targets.contains('=')
        || rest.starts_with(':')
        || rest.starts_with('=')
    {
        return None;
    }
    Some((targets, rest))
}

/// The index of the bracket closing the one at `s[0]`.
fn matching(s: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_expand_the_makefiles_variables() {
        // 1.1.1w's generated Makefile, abridged.
        let m = Makefile::parse(
            "SHLIB_VERSION_NUMBER=1.1\nSHLIB_EXT=.so.$(SHLIB_VERSION_NUMBER)\n\
             SHLIBS=libcrypto$(SHLIB_EXT) libssl${SHLIB_EXT} \\\n  x$(NOPE)y $$z\n",
        );
        assert_eq!(
            m.words("SHLIBS").unwrap(),
            ["libcrypto.so.1.1", "libssl.so.1.1", "xy", "$z"]
        );
        // A self-reference ends instead of recursing forever.
        let m = Makefile::parse("A=a$(A)\n");
        assert!(m.words("A").unwrap()[0].starts_with("aaaa"));
        assert_eq!(m.words("NOPE"), None);
    }

    #[test]
    fn rules_recipes_and_recorded_depends() {
        let m = Makefile::parse(concat!(
            "CC=gcc\nLIB_CFLAGS=-O2 $(CNF)\nCNF=-fPIC\nX:=1\n",
            ".PHONY: all depend\n",
            "all: libcrypto.so.3\n",
            "crypto/a.o: ../src/crypto/a.c \\\n    crypto/gen.h\n",
            "\t$(CC) -DX=1 $(LIB_CFLAGS) -c -o $@ ../src/crypto/a.c\n",
            "\t@touch crypto/a.d.tmp; \\\n    mv crypto/a.d.tmp crypto/a.d\n",
            "\n# a comment\n",
            "libcrypto.so.3: crypto/a.o $(wildcard ../src/x*) | order\n",
            "\t$(CC) -shared -o $@ crypto/a.o\n",
            "%.o: %.c\n\tcc $<\n",
            "# DO NOT DELETE THIS LINE -- make depend depends on it.\n",
            "crypto/a.o: include/openssl/x.h \\\n ../src/include/y.h\n",
        ));
        assert_eq!(m.value("X"), Some("1"));
        assert!(m.is_phony("depend") && !m.is_phony("crypto/a.o"));
        let mut targets: Vec<&str> = m.targets().collect();
        targets.sort();
        assert_eq!(targets, ["all", "crypto/a.o", "libcrypto.so.3"]);
        let a = m.expanded_rule("crypto/a.o").unwrap();
        assert_eq!(a.prerequisites, ["../src/crypto/a.c", "crypto/gen.h"]);
        assert_eq!(a.recipe.len(), 2);
        assert_eq!(
            a.recipe[0],
            "gcc -DX=1 -O2 -fPIC -c -o $@ ../src/crypto/a.c"
        );
        let lib = m.expanded_rule("libcrypto.so.3").unwrap();
        assert_eq!(
            lib.prerequisites,
            ["crypto/a.o", "$(wildcard", "../src/x*)"]
        );
        // The dependency lines below the marker are not rules.
        assert_eq!(
            m.expanded_rule("crypto/a.o").unwrap().prerequisites.len(),
            2
        );
    }
}
