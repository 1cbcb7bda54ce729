//! The install step: only what a benchmark loads, from the build tree into the staging prefix,
//! checked before it is published.

use super::*;

/// Where a build's prefix comes from (see install.rs), for the install phase of [`build`].
pub(super) struct Publish<'a> {
    pub(super) src: &'a Path,
    pub(super) build_dir: &'a Path,
    pub(super) install_dir: &'a Path,
    pub(super) log_path: &'a Path,
    /// The Makefile's targets.
    pub(super) targets: &'a BTreeSet<String>,
    pub(super) clashes: &'a [install::Clash],
}

impl Publish<'_> {
    /// Publishes the prefix: by make install, or from the build tree when `from_tree` (the
    /// recipe built only the shared libraries). Returns the install targets and, after a
    /// fallback, why make install failed.
    pub(super) fn install(
        &self,
        from_tree: bool,
        makefile: &Path,
        steps: &mut Steps,
    ) -> Result<(Vec<String>, Option<String>)> {
        if !from_tree {
            return self.make_install(makefile, steps);
        }
        // install_dev would copy the static libraries this build did not make.
        self.take_from_tree(
            "taking the shared libraries, headers, modules and engines from the build tree",
        )
        .map_err(|e| {
            BuildFailed(format!(
                "install failed: the build tree has no usable libraries ({e:#}); log: {}",
                self.log_path.display()
            ))
        })?;
        Ok((Vec::new(), None))
    }

    /// The prefix taken from the build tree, each file logged; `why` opens the log line.
    pub(super) fn take_from_tree(&self, why: &str) -> Result<()> {
        append_to_log(self.log_path, &format!("### perfbisect: {why}"))?;
        let files = install_from_build_tree(self.src, self.build_dir, self.install_dir)?;
        for f in &files {
            append_to_log(
                self.log_path,
                &format!("### perfbisect: from the build tree: {f}"),
            )?;
        }
        Ok(())
    }

    /// `make install_dev` (with install_engines / install_modules where this version has
    /// them; never install_sw or docs) into a DESTDIR, moved into place, clashing libraries
    /// mended. OpenSSL's install can fail where its build did not (on 2022 master, install_dev
    /// copied a static libssl.a that build_libs never made): what a kernel loads is in the
    /// build tree then, and is published from there. Returns the install targets and, after
    /// such a fallback, why make install failed.
    pub(super) fn make_install(
        &self,
        makefile: &Path,
        steps: &mut Steps,
    ) -> Result<(Vec<String>, Option<String>)> {
        let install_targets: Vec<String> = ["install_dev", "install_engines", "install_modules"]
            .iter()
            .filter(|t| self.targets.contains(**t))
            .map(|t| t.to_string())
            .collect();
        if !install_targets.iter().any(|t| t == "install_dev") {
            failed!(
                "install failed: {} has no install_dev target; log: {}",
                makefile.display(),
                self.log_path.display()
            );
        }
        // Serial: everything is built already; this only copies files. DESTDIR stages under
        // install_dir (same file system), then moves into place.
        let destdir = self.install_dir.join(".perfbisect-destdir");
        let mut args = vec![format!("DESTDIR={}", destdir.display())];
        args.extend(install_targets.iter().cloned());
        let installed = steps
            .run(Phase::Install, true, Path::new("make"), &args)
            .and_then(|_| move_installed(&destdir, self.install_dir))
            .and_then(|_| install::mend_clashes(self.build_dir, self.install_dir, self.clashes));
        let e = match installed {
            Ok(mended) => {
                for m in mended {
                    append_to_log(
                        self.log_path,
                        &format!("### perfbisect: published {m} over what make install left there"),
                    )?;
                }
                return Ok((install_targets, None));
            }
            Err(e) if e.downcast_ref::<BuildFailed>().is_some() => e,
            Err(e) => return Err(e),
        };
        let why = format!("{e:#}");
        let why = why.lines().next().unwrap_or_default();
        let why = why.split("; log: ").next().unwrap_or(why).to_string();
        let copied = fs::remove_dir_all(self.install_dir)
            .with_context(|| format!("clearing {}", self.install_dir.display()))
            .and_then(|_| {
                self.take_from_tree(&format!(
                    "{why}; taking the shared libraries, headers, modules and engines from the build tree instead"
                ))
            });
        if let Err(ce) = copied {
            append_to_log(self.log_path, &format!("### perfbisect: {ce:#}"))?;
            failed!(
                "{why}, and the build tree has no usable libraries either ({ce:#}); log: {}\n{}",
                self.log_path.display(),
                tail(self.log_path, TAIL_LINES)
            );
        }
        Ok((install_targets, Some(why)))
    }
}

/// The load check (see installed.rs): a prefix that fails it is a failed build.
pub(super) fn check_published(install_dir: &Path, log_path: &Path) -> Result<()> {
    let problems = installed::check(install_dir)?;
    if problems.is_empty() {
        return Ok(());
    }
    for p in &problems {
        append_to_log(log_path, &format!("### perfbisect: load check: {p}"))?;
    }
    failed!(
        "the published libraries fail the load check: {}; log: {}",
        installed::summary(&problems),
        log_path.display()
    );
}
