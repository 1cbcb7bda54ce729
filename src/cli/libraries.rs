//! `--openssl-dir` or `--rev`: which OpenSSL libraries `run` and `parity` measure.

use clap::Args;

use super::build::BuildArgs;

/// Which OpenSSL libraries a command measures: installed prefixes (default: the system's) or
/// cached builds of revisions of a repository.
#[derive(Args)]
pub struct LibraryArgs {
    /// Installed OpenSSL prefix(es) holding include/ and lib/; `system` is the system's (the
    /// default)
    #[arg(long = "openssl-dir", value_name = "PREFIX")]
    pub openssl_dirs: Vec<std::path::PathBuf>,
    /// Build these revisions of --repo (cached) and measure them
    #[arg(long = "rev", value_name = "REV", conflicts_with = "openssl_dirs")]
    pub revs: Vec<String>,
    #[command(flatten)]
    pub build: BuildArgs,
}

impl LibraryArgs {
    /// The repository and recipe, when revisions are asked for.
    pub fn open_repo(
        &self,
    ) -> anyhow::Result<Option<(crate::build::repo::Repo, crate::build::recipe::Recipe)>> {
        if self.revs.is_empty() {
            Ok(None)
        } else {
            self.build.open().map(Some)
        }
    }

    pub fn libraries(
        &self,
        repo: Option<&crate::build::repo::Repo>,
    ) -> anyhow::Result<Vec<crate::measure::engine::Library>> {
        use crate::build::prefix::Prefix;
        use crate::measure::engine::{Library, Target};
        let mut libs = Vec::new();
        if let Some(repo) = repo {
            super::args::unique("revision", &self.revs).map_err(anyhow::Error::msg)?;
            for rev in &self.revs {
                libs.push(Library::Revision {
                    label: rev.clone(),
                    commit: repo.resolve_subject(rev)?,
                });
            }
        } else if self.openssl_dirs.is_empty() {
            libs.push(Library::Installed(Target::installed(Prefix::system()?)));
        } else {
            for d in &self.openssl_dirs {
                let label = d.display().to_string();
                let prefix = if label == "system" {
                    Prefix::system()?
                } else {
                    Prefix::from_dir(d, &label)?
                };
                libs.push(Library::Installed(Target::installed(prefix)));
            }
        }
        Ok(libs)
    }
}
