//! How a command ended. The one place that knows the process's exit codes (the README's
//! "Exit codes"); `main.rs` maps an [`Exit`] to them, and an error to 2 or, after Ctrl-C, 130.

use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Done,
    /// 1: a gate found a significant regression beyond its threshold.
    Regression,
    /// 2: could not be done (bad input, an error, a gate that could not decide).
    Failed,
    /// 3: a search finished, but a candidate change point did not hold on its confirmation
    /// block.
    Unconfirmed,
    /// 130: interrupted; the same command resumes (main.rs gives 128 + the signal that
    /// stopped it: 143 for SIGTERM, 129 for SIGHUP).
    Interrupted,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Regression => 1,
            Exit::Failed => 2,
            Exit::Unconfirmed => 3,
            Exit::Interrupted => 130,
        }
    }

    /// A gate's recorded exit code (`GateReport::exit_code`, kept in its JSON).
    pub fn of_gate(code: u8) -> Exit {
        match code {
            0 => Exit::Done,
            1 => Exit::Regression,
            _ => Exit::Failed,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}
