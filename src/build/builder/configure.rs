//! The configure step: the Configure call a recipe makes, and whether an incremental build
//! must configure again.

use super::*;

/// What [`ConfigureCall::configure`] did.
pub(super) struct Configured {
    pub(super) ran: bool,
    pub(super) secs: f64,
    /// After configuring an earlier build again: what its build directory held before.
    pub(super) snapshot: Option<restat::Snapshot>,
}

/// How configure runs for this build.
pub(super) struct ConfigureCall {
    pub(super) program: PathBuf,
    pub(super) args: Vec<String>,
    /// What configure ran with, kept in the build directory: an incremental build configures
    /// again when it would run with anything else (a different compiler command, ccache
    /// installed since), since the Makefile and the compiled-in build information depend on
    /// it.
    pub(super) record: PathBuf,
    pub(super) with: String,
}

impl ConfigureCall {
    pub(super) fn new(
        req: &BuildRequest,
        src: &Path,
        build_dir: &Path,
        cc: &[String],
    ) -> ConfigureCall {
        let mut args = vec![
            format!("--prefix={CONFIGURED_PREFIX}"),
            format!("--openssldir={CONFIGURED_PREFIX}/ssl"),
            "--libdir=lib".to_string(),
        ];
        args.extend(req.recipe.configure_args.iter().cloned());
        args.push(format!("CC={}", cc.join(" ")));
        ConfigureCall {
            program: src.join("config"),
            with: args.join("\n"),
            args,
            record: build_dir.join(".perfbisect-configured"),
        }
    }

    /// Configures the tree where it must be (see [`ConfigureCall::needed`]).
    pub(super) fn configure(
        &self,
        req: &BuildRequest,
        src: &Path,
        build_dir: &Path,
        steps: &mut Steps,
    ) -> Result<Configured> {
        let ran = self.needed(req.start);
        if !ran {
            steps.note(
                "### perfbisect: incremental build: configure inputs unchanged, not configuring again",
            );
        }
        // A configure-again build keeps what configure did not change (see restat): what the
        // build directory held before, to compare with.
        let snapshot = match req.start {
            Start::Incremental { .. } if ran => restat::Snapshot::take(build_dir)?,
            _ => None,
        };
        let secs = if ran {
            self.run(req, src, build_dir, steps)?
        } else {
            0.0
        };
        Ok(Configured {
            ran,
            secs,
            snapshot,
        })
    }

    pub(super) fn needed(&self, start: Start) -> bool {
        match start {
            Start::Clean => true,
            Start::Incremental { reconfigure } => {
                reconfigure
                    || fs::read_to_string(&self.record).ok().as_deref() != Some(self.with.as_str())
            }
        }
    }

    /// Configures the build directory, or restores what configure made of the same inputs
    /// before (see configured), and records what it ran with. Returns configure's seconds.
    pub(super) fn run(
        &self,
        req: &BuildRequest,
        src: &Path,
        build_dir: &Path,
        steps: &mut Steps,
    ) -> Result<f64> {
        fs::remove_file(&self.record).ok();
        let key = match req.configure_store {
            Some(_) => Some(configured::key(
                src,
                build_dir,
                &self.with,
                &req.recipe.fingerprint,
            )?),
            None => None,
        };
        let reused = match (req.start, req.configure_store, &key) {
            (Start::Incremental { .. }, Some(store), Some(key)) => {
                configured::restore(store, key, build_dir)?.map(|files| (store, files))
            }
            _ => None,
        };
        let secs = match reused {
            Some((store, files)) => {
                append_to_log(
                    req.log_path,
                    &format!(
                        "### perfbisect: configure not run: this tree was configured with the same inputs before; its output reused from {}: {}",
                        store.display(),
                        files.join(", ")
                    ),
                )?;
                0.0
            }
            None => {
                let before = configured::before(build_dir)?;
                let secs = steps.run(Phase::Configure, true, &self.program, &self.args)?;
                if let (Some(store), Some(key)) = (req.configure_store, &key) {
                    configured::save(store, key, build_dir, &before)?;
                }
                secs
            }
        };
        fs::write(&self.record, &self.with)
            .with_context(|| format!("writing {}", self.record.display()))?;
        Ok(secs)
    }
}
