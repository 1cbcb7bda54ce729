//! The make step: which targets, what an incremental build may keep, and what
//! `shared_libs` means in a given Makefile.

use super::*;

/// What make builds in a configured tree, read from its Makefile.
pub(super) struct MakePlan {
    pub(super) makefile: PathBuf,
    /// The Makefile's targets.
    pub(super) targets: BTreeSet<String>,
    pub(super) parsed: Makefile,
    /// The make targets, one make invocation each (see [`MakePlan::run`]).
    pub(super) steps: Vec<String>,
    /// The recipe builds only the shared libraries: the prefix is taken from the build tree.
    pub(super) from_tree: bool,
    pub(super) clashes: Vec<install::Clash>,
}

impl MakePlan {
    pub(super) fn read(
        req: &BuildRequest,
        build_dir: &Path,
        steps: &mut Steps,
    ) -> Result<MakePlan> {
        let makefile = build_dir.join("Makefile");
        let targets = makefile_targets(&makefile).map_err(|e| BuildFailed(format!("{e:#}")))?;
        let make_targets = recipe_make_targets(req, &makefile, &targets, steps)?;
        let parsed = Makefile::parse(&fs::read_to_string(&makefile).unwrap_or_default());
        let (make_targets, from_tree) = expand_shared_libs(make_targets, &targets, &parsed);
        let clashes = install::shared_libraries(&parsed)
            .map(|s| s.clashes)
            .unwrap_or_default();
        for c in &clashes {
            append_to_log(req.log_path, &format!("### perfbisect: {c}"))?;
        }
        Ok(MakePlan {
            makefile,
            targets,
            parsed,
            steps: make_targets,
            from_tree,
            clashes,
        })
    }

    /// Runs make, after keeping what configure did not change when it ran again (`snapshot`).
    /// Returns make's seconds and the objects kept.
    pub(super) fn run(
        &self,
        req: &BuildRequest,
        snapshot: Option<&restat::Snapshot>,
        jobs: usize,
        steps: &mut Steps,
    ) -> Result<(f64, Option<usize>)> {
        let mut make_secs = 0.0;
        let mut kept = None;
        if let Some(snap) = snapshot {
            let (secs, objects) =
                keep_unchanged_objects(req, snap, &self.parsed, &self.targets, jobs, steps)?;
            make_secs += secs;
            kept = Some(objects);
        }
        // One make invocation per step: OpenSSL's top-level targets
        // (build_libs, build_modules, …) each run `$(MAKE) depend && $(MAKE)
        // _target`, so two of them in one parallel make would compile the same
        // objects at the same time and clobber each other's files. A step that
        // names several files (3.x libraries and modules) names plain targets.
        for (i, t) in self.steps.iter().enumerate() {
            let mut args = vec![format!("-j{jobs}")];
            args.extend(t.split_whitespace().map(String::from));
            let announce = i == 0 && snapshot.is_none();
            make_secs += steps.run(Phase::Make, announce, Path::new("make"), &args)?;
        }
        Ok((make_secs, kept))
    }
}

/// The recipe's make targets and the run-time modules' target: providers (legacy) and engines
/// on 3.x are built by build_modules, engines on 1.1.1 by build_engines. A target the
/// Makefile lacks fails the build.
pub(super) fn recipe_make_targets(
    req: &BuildRequest,
    makefile: &Path,
    targets: &BTreeSet<String>,
    steps: &mut Steps,
) -> Result<Vec<String>> {
    let mut make_targets = req.recipe.make_targets.clone();
    let extra = if targets.contains("build_modules") {
        Some("build_modules")
    } else if targets.contains("build_engines") {
        Some("build_engines")
    } else {
        None
    };
    if let Some(x) = extra {
        if !make_targets.iter().any(|t| t == x) {
            make_targets.push(x.to_string());
        }
    }
    if let Some(missing) = req
        .recipe
        .make_targets
        .iter()
        .find(|t| *t != SHARED_LIBS && !targets.contains(t.as_str()))
    {
        steps.note(&format!(
            "### perfbisect: make target {missing} does not exist in {}",
            makefile.display()
        ));
        failed!(
            "make failed: the recipe's make target '{missing}' does not exist in this tree's Makefile; log: {}",
            req.log_path.display()
        );
    }
    Ok(make_targets)
}

/// After configuring again (see restat): removes the targets whose rule changed, makes the
/// generated sources, and keeps every other object. Returns make's seconds and the objects
/// kept.
pub(super) fn keep_unchanged_objects(
    req: &BuildRequest,
    snap: &restat::Snapshot,
    new: &Makefile,
    targets: &BTreeSet<String>,
    jobs: usize,
    steps: &mut Steps,
) -> Result<(f64, usize)> {
    let build_dir = steps.build_dir;
    let removed = restat::remove_changed(build_dir, snap, new)?;
    let mut generate = restat::generated_sources(snap, new);
    if targets.contains("build_generated") {
        generate.insert(0, "build_generated".to_string());
    }
    let mut secs = 0.0;
    if !generate.is_empty() {
        let mut args = vec![format!("-j{jobs}")];
        args.extend(generate);
        secs += steps.run(Phase::Make, true, Path::new("make"), &args)?;
    }
    let k = restat::keep_unchanged(build_dir, snap, new)?;
    append_to_log(
        req.log_path,
        &format!(
            "### perfbisect: kept {} object(s) and {} other target(s) whose rule and inputs configure did not change; {} object(s) to compile; {} target(s) removed because their rule changed",
            k.objects, k.others, k.objects_to_build, removed
        ),
    )?;
    Ok((secs, k.objects))
}

/// The recipe's make target that means "only what a kernel loads": the shared libraries (the
/// Makefile's `SHLIBS`) after the generated headers and `depend`, not the static libraries
/// (`build_libs` makes both: twice the compiler runs, half of them ccache hits at best), apps
/// or tests. The modules and engines are added like for any recipe. A tree whose Makefile
/// names no `SHLIBS` gets `build_libs` instead.
pub const SHARED_LIBS: &str = "shared_libs";

/// `targets` with [`SHARED_LIBS`] replaced by what it means in this Makefile, and whether it
/// was used (then the build is published from the build tree, not by `make install_dev`).
pub(super) fn expand_shared_libs(
    targets: Vec<String>,
    known: &BTreeSet<String>,
    makefile: &Makefile,
) -> (Vec<String>, bool) {
    if !targets.iter().any(|t| t == SHARED_LIBS) {
        return (targets, false);
    }
    let shlibs = install::shared_libraries(makefile).map(|s| s.files);
    // OpenSSL 3's build_modules is `$(MAKE) depend && $(MAKE) _build_modules`: two more reads of
    // a 4 MB Makefile and a merge of every .d file, about a second per build. Its
    // build_modules_nodep names the same modules, and make orders them after libcrypto.so (they
    // link it), so one make builds the libraries and the modules. The next build's own `depend`
    // merges the .d files this build wrote.
    let modules_with_libs = shlibs.is_some() && known.contains("build_modules_nodep");
    let mut out = Vec::new();
    for t in targets {
        if modules_with_libs && t == "build_modules" {
            continue;
        }
        if t != SHARED_LIBS {
            out.push(t);
            continue;
        }
        match &shlibs {
            Some(libs) => {
                for pre in ["build_generated", "depend"] {
                    if known.contains(pre) {
                        out.push(pre.to_string());
                    }
                }
                if modules_with_libs {
                    // 3.x: one single-target rule per library, so one parallel make is safe.
                    let mut step = libs.clone();
                    step.push("build_modules_nodep".to_string());
                    out.push(step.join(" "));
                } else {
                    // One make per library, in the Makefile's order: 1.1.1's rule for a shared
                    // library names two targets (`libcrypto.so libcrypto.so.1.1: …`), so a
                    // parallel make asked for libcrypto.so.1.1 and, through libssl, for
                    // libcrypto.so runs the link twice at once ("ln: failed to create symbolic
                    // link … File exists").
                    out.extend(libs.iter().cloned());
                }
            }
            None => out.push("build_libs".to_string()),
        }
    }
    (out, shlibs.is_some())
}

/// Names of the explicit targets of a generated Makefile (`name:` at the
/// start of a line, not `name:=`).
pub(super) fn makefile_targets(makefile: &Path) -> Result<BTreeSet<String>> {
    let text = fs::read_to_string(makefile)
        .with_context(|| format!("configure produced no readable {}", makefile.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let ok = !name.is_empty()
                && !rest.starts_with('=')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            ok.then(|| name.to_string())
        })
        .collect())
}
