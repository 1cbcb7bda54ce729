//! `--executor`: where a search's builds and samples are made (this machine, or Slurm jobs),
//! and the hidden subcommand a Slurm measurement job runs.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;

use super::Global;
use crate::build::recipe::Recipe;
use crate::build::repo::Repo;
use crate::cache::Cache;
use crate::cli::args::parse_count;
use crate::cli::build::BuildArgs;
use crate::cli::exit::Exit;
use crate::measure::exec::slurm::{Slurm, SlurmConfig};
use crate::measure::exec::{node, Executor, ExecutorKind};

/// Options of the executor.
#[derive(Args, Clone, Debug)]
pub struct ExecArgs {
    /// Where builds and measurements run: this machine, or every build and every search's
    /// samples as jobs of a Slurm cluster that shares the cache's filesystem
    #[arg(long, value_enum, default_value_t = ExecutorKind::Local)]
    pub executor: ExecutorKind,
    /// A TOML file whose [slurm] table sets build_partition, measure_partition, max_jobs,
    /// lanes, sbatch_args, job_retries, work_dir, prefetch, pending_limit, build_time_limit,
    /// build_cpus and lane_time_limit (flags win over it)
    #[arg(long, value_name = "FILE")]
    pub slurm_config: Option<PathBuf>,
    /// Slurm partition for builds [default: build]
    #[arg(long, value_name = "NAME")]
    pub slurm_build_partition: Option<String>,
    /// Slurm partition for measurements, a node held exclusively per search [default: measure]
    #[arg(long, value_name = "NAME")]
    pub slurm_measure_partition: Option<String>,
    /// Slurm jobs queued or running at once [default: 16]
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub slurm_max_jobs: Option<usize>,
    /// Measurement nodes sampled side by side: a scan's searches, a bisect's probes per wave (at
    /// most 4), each on a node of its own [default: the measurement partition's nodes, at most
    /// --slurm-max-jobs]
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub slurm_lanes: Option<usize>,
    /// An argument for every sbatch, e.g. --sbatch-arg=--account=perf (repeatable)
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    slurm: SlurmConfig,
}

impl ExecArgs {
    /// The Slurm configuration asked for (`None`: the local executor); flags given for an
    /// executor that is not chosen are refused rather than ignored.
    pub fn slurm(&self) -> Result<Option<SlurmConfig>> {
        let slurm_flags = self.slurm_config.is_some()
            || self.slurm_build_partition.is_some()
            || self.slurm_measure_partition.is_some()
            || self.slurm_max_jobs.is_some()
            || self.slurm_lanes.is_some()
            || !self.sbatch_args.is_empty();
        if self.executor == ExecutorKind::Local {
            if slurm_flags {
                bail!("--slurm-* and --sbatch-arg need --executor slurm");
            }
            return Ok(None);
        }
        let mut cfg = match &self.slurm_config {
            Some(p) => read_config(p)?,
            None => SlurmConfig::default(),
        };
        if let Some(p) = &self.slurm_build_partition {
            cfg.build_partition = p.clone();
        }
        if let Some(p) = &self.slurm_measure_partition {
            cfg.measure_partition = p.clone();
        }
        if let Some(n) = self.slurm_max_jobs {
            cfg.max_jobs = n;
        }
        if let Some(n) = self.slurm_lanes {
            cfg.lanes = Some(n);
        }
        cfg.sbatch_args.extend(self.sbatch_args.iter().cloned());
        Ok(Some(cfg))
    }

    /// The executor asked for, connected and checked (`None`: the session's local one).
    pub fn executor<'a>(
        &self,
        (cache, repo): (&'a Cache, &'a Repo),
        build: &BuildArgs,
        recipe: &'a Recipe,
    ) -> Result<Option<Box<dyn Executor + 'a>>> {
        let Some(cfg) = self.slurm()? else {
            return Ok(None);
        };
        let slurm = Slurm::connect(
            cache,
            repo,
            build.options(recipe),
            build.sources().forward()?,
            cfg,
        )?;
        Ok(Some(Box::new(slurm)))
    }
}

fn read_config(path: &Path) -> Result<SlurmConfig> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let f: ConfigFile = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.message()))?;
    if f.slurm.max_jobs == 0 {
        bail!("{}: max_jobs must be at least 1", path.display());
    }
    if f.slurm.lanes == Some(0) {
        bail!("{}: lanes must be at least 1", path.display());
    }
    if f.slurm.build_cpus == Some(0) {
        bail!("{}: build_cpus must be at least 1", path.display());
    }
    if f.slurm.lane_time_limit == 0 {
        bail!(
            "{}: lane_time_limit must be at least 1 (seconds)",
            path.display()
        );
    }
    Ok(f.slurm)
}

/// `perfbisect __lane DIR`: a measurement lane's job (see measure::exec::node).
#[derive(Args)]
pub struct LaneArgs {
    dir: PathBuf,
}

pub fn lane_job(g: &Global, a: LaneArgs) -> Result<Exit> {
    let cache = Cache::open(&g.cache())?;
    node::run_lane(&cache, &a.dir)?;
    Ok(Exit::Done)
}
