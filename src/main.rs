//! perfbisect: find the OpenSSL commit that made an operation slower (or
//! faster). This file only wires the command line to the stages.

mod cache;
mod cmd;
mod compile;
mod hashing;
mod kernel;
mod measure;
mod prefix;
mod progress;
mod report;
mod runner;
mod stats;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "perfbisect",
    version,
    about = "Find the OpenSSL commit that made an operation slower (or faster)"
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
pub struct Global {
    /// Cache directory (default: $PERFBISECT_CACHE, else ~/.cache/perfbisect)
    #[arg(long, global = true, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Extra kernels (*.c) to use beside the built-in ones
    #[arg(long, global = true, value_name = "DIR")]
    kernels_dir: Option<PathBuf>,
    /// Print only results
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Print every sample and build step
    #[arg(short, long, global = true)]
    verbose: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Measure tools against an installed OpenSSL (default: the system's)
    Run(cmd::run::RunArgs),
    /// List the benchmark kernels, their arguments and defaults
    Kernels(cmd::kernels::KernelsArgs),
    /// One sample in a fresh process (used by perfbisect itself)
    #[command(name = "__sample", hide = true)]
    Sample(cmd::run::SampleArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            // One line, like every other error: clap's own text adds a usage
            // block and a hint on further lines.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("perfbisect: error: {first} (see --help)");
            return ExitCode::from(2);
        }
    };
    progress::set_level(if cli.global.quiet {
        0
    } else if cli.global.verbose {
        2
    } else {
        1
    });
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(&cli.global, a),
        Command::Kernels(a) => cmd::kernels::run(&cli.global, a),
        Command::Sample(a) => return ExitCode::from(cmd::run::sample_child(a) as u8),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("perfbisect: error: {msg}");
            ExitCode::from(2)
        }
    }
}
