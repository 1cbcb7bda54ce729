//! perfbisect: find the OpenSSL commit that made an operation slower (or
//! faster). This file only wires the command line to the library's commands.

use clap::{Parser, Subcommand};
use perfbisect::cli::exit::Exit;
use perfbisect::cli::Global;
use perfbisect::{cli, interrupt, progress};
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

#[derive(Subcommand)]
enum Command {
    /// Measure tools against an installed OpenSSL (default: the system's)
    Run(cli::run::RunArgs),
    /// Find the commit(s) in GOOD..BAD that changed a tool's speed
    Bisect(cli::bisect::BisectArgs),
    /// Profile a whole range: a coarse grid, a step fit, then a bisect of every grid interval
    /// that changed
    Scan(cli::scan::ScanArgs),
    /// Compare two revisions: means, ratio with CI, p-values, verdict
    Compare(cli::compare::CompareArgs),
    /// Compare a commit with its parent: did it really change performance?
    Verify(cli::compare::VerifyArgs),
    /// Where did the instructions go? Profile REV^ and REV (or A and B) under callgrind
    Explain(cli::explain::ExplainArgs),
    /// List past bisects in this cache
    Log(cli::log::LogArgs),
    /// Check the search and its statistics on simulated commits
    Simulate(cli::simulate::SimulateArgs),
    /// Predict the wall time of a scan or a bisect on a fleet of build and measurement nodes
    Plan(cli::plan::PlanArgs),
    /// Version x thread-count tables (and SVG plots) of tools
    Matrix(cli::matrix::MatrixArgs),
    /// Fail CI on a significant slowdown of HEAD against BASE (exit 1)
    Gate(cli::gate::GateArgs),
    /// perfbisect's kernels next to openssl/perftools' programs on the same OpenSSL
    Parity(cli::parity::ParityArgs),
    /// Work with result files (merge shards)
    Report(cli::report::ReportCmd),
    /// Build OpenSSL revisions into the cache
    Build(cli::build::BuildCmd),
    /// List the built-in Configure recipes
    Recipes,
    /// Inspect and prune the cache
    Cache(cli::cache::CacheCmd),
    /// List the benchmark kernels, their arguments and defaults
    Kernels(cli::kernels::KernelsArgs),
    /// A fleet's measurement lane: the blocks of samples handed to it (used by perfbisect itself)
    #[command(name = "__lane", hide = true)]
    Lane(cli::exec::LaneArgs),
}

// The sampling child's own command line (`__sample`, used by perfbisect itself). Parsed apart
// from `Cli`: clap builds every command's arguments before it parses any, and under valgrind
// that was 0.17 s of each instruction sample (1.38 s -> 1.21 s, randbytes, debug build).
#[derive(Parser)]
#[command(name = "perfbisect __sample")]
struct SampleCli {
    #[command(flatten)]
    args: cli::run::SampleArgs,
}

/// One sample, when this process is a sampling child (the parent made its command line).
fn sample_child() -> Option<ExitCode> {
    let mut argv = std::env::args_os();
    let exe = argv.next()?;
    if argv.next()? != perfbisect::measure::runner::HIDDEN_SUBCOMMAND {
        return None;
    }
    let parsed = SampleCli::try_parse_from(std::iter::once(exe).chain(argv));
    // The child keeps the default SIGINT action: Ctrl-C ends it at once.
    Some(match parsed {
        Ok(c) => ExitCode::from(cli::run::sample_child(c.args) as u8),
        Err(e) => {
            eprintln!("perfbisect __sample: error: {}", one_line(&e));
            Exit::Failed.into()
        }
    })
}

/// One line, like every other error: clap's own text adds a usage block and a hint on further
/// lines.
fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let msg: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim())
        .collect();
    let msg = msg.join(" ");
    msg.strip_prefix("error: ").unwrap_or(&msg).to_string()
}

fn main() -> ExitCode {
    if let Some(code) = sample_child() {
        return code;
    }
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
            eprintln!("perfbisect: error: {} (see --help)", one_line(&e));
            return Exit::Failed.into();
        }
    };
    progress::set_level(if cli.global.quiet {
        0
    } else if cli.global.verbose {
        2
    } else {
        1
    });
    interrupt::install();
    let result: anyhow::Result<cli::exit::Exit> = match cli.command {
        Command::Run(a) => cli::run::run(&cli.global, a),
        Command::Kernels(a) => cli::kernels::run(&cli.global, a),
        Command::Build(a) => cli::build::run(&cli.global, a),
        Command::Bisect(a) => cli::bisect::run(&cli.global, a),
        Command::Scan(a) => cli::scan::run(&cli.global, a),
        Command::Compare(a) => cli::compare::run_compare(&cli.global, a),
        Command::Verify(a) => cli::compare::run_verify(&cli.global, a),
        Command::Matrix(a) => cli::matrix::run(&cli.global, a),
        Command::Gate(a) => cli::gate::run(&cli.global, a),
        Command::Report(a) => cli::report::run(&cli.global, a),
        Command::Parity(a) => cli::parity::run(&cli.global, a),
        Command::Log(a) => cli::log::run(&cli.global, a),
        Command::Explain(a) => cli::explain::run(&cli.global, a),
        Command::Simulate(a) => cli::simulate::run(a),
        Command::Plan(a) => cli::plan::run(&cli.global, a),
        Command::Recipes => cli::recipes::run(),
        Command::Cache(a) => cli::cache::run(&cli.global, a),
        Command::Lane(a) => cli::exec::lane_job(&cli.global, a),
    };
    match result {
        Ok(exit) => exit.into(),
        // Whatever error a Ctrl-C caused (a killed child, a cut pipe), the
        // answer is the same: stopped, nothing half-written, how to resume.
        Err(e)
            if e.downcast_ref::<interrupt::Interrupted>().is_some() || interrupt::interrupted() =>
        {
            // Jobs a scheduler still holds for this run go with it (the executor that queued
            // them cancels them as it stops; this catches any it could not).
            interrupt::cancel_jobs();
            eprintln!("perfbisect: {}", interrupt::Interrupted);
            ExitCode::from(interrupt::exit_code() as u8)
        }
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("perfbisect: error: {msg}");
            Exit::Failed.into()
        }
    }
}
