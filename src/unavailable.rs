//! Why a subject has no number: one typed reason, carried from the build or
//! the sampling child to every report (a gate tells "not applicable" from a
//! crash by its kind, never by the wording of a message).

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Unavailable {
    /// The build of this commit failed (cached as failed, with its log).
    BuildFailed {
        log: String,
    },
    /// The kernel does not load because the build's library lacks a symbol it calls: a
    /// problem of that build (a stub or broken library), not a crash of the kernel.
    MissingSymbol {
        /// The build: its commit, or the prefix the user named.
        build: String,
        library: String,
        symbol: String,
    },
    /// The kernel declares an oldest OpenSSL that this one predates.
    TooOld {
        kernel: String,
        needs: String,
        have: String,
    },
    /// The kernel itself said its operation does not exist here.
    NotApplicable {
        message: String,
    },
    Crashed {
        kernel: String,
        signal: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    TimedOut {
        kernel: String,
        seconds: f64,
    },
    /// The kernel reported an error, or the child gave no result.
    KernelFailed {
        kernel: String,
        message: String,
    },
    /// Simulated commits (perfbisect simulate) and test fakes.
    Simulated {
        message: String,
    },
    /// A reason a result written before reasons were typed holds as text (read back by
    /// [`typed_or_text`]); shown as it was.
    Recorded {
        message: String,
    },
}

/// `deserialize_with` for an `Option<Unavailable>` field that older results wrote as the
/// reason's text: a string reads as [`Unavailable::Recorded`], so such a result still renders.
pub fn typed_or_text<'de, D>(d: D) -> Result<Option<Unavailable>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Typed(Unavailable),
        Text(String),
    }
    Ok(Option::<Either>::deserialize(d)?.map(|e| match e {
        Either::Typed(u) => u,
        Either::Text(message) => Unavailable::Recorded { message },
    }))
}

impl Unavailable {
    /// "Not applicable" is a result (the operation does not exist on this
    /// version), not a failure.
    pub fn is_not_applicable(&self) -> bool {
        matches!(
            self,
            Unavailable::TooOld { .. } | Unavailable::NotApplicable { .. }
        )
    }

    /// A failure of one process (crash, hang, error) that a new process may not repeat.
    pub fn is_kernel_failure(&self) -> bool {
        matches!(
            self,
            Unavailable::Crashed { .. }
                | Unavailable::TimedOut { .. }
                | Unavailable::KernelFailed { .. }
        )
    }
}

impl Unavailable {
    /// The reason alone, for a report's `not_applicable` field (whose name
    /// already says what kind of reason it is).
    pub fn reason(&self) -> String {
        match self {
            Unavailable::NotApplicable { message } => message.clone(),
            Unavailable::TooOld {
                kernel,
                needs,
                have,
            } => format!("{kernel} needs OpenSSL {needs} or later, this is {have}"),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::BuildFailed { log } => write!(f, "build failed (log: {log})"),
            Unavailable::MissingSymbol {
                build,
                library,
                symbol,
            } => write!(f, "build problem: {library} of {build} exports no {symbol}"),
            Unavailable::TooOld { .. } | Unavailable::NotApplicable { .. } => {
                write!(f, "not applicable: {}", self.reason())
            }
            Unavailable::Crashed {
                kernel,
                signal,
                name,
            } => match name {
                Some(n) => write!(f, "kernel {kernel} crashed (signal {signal}, {n})"),
                None => write!(f, "kernel {kernel} crashed (signal {signal})"),
            },
            Unavailable::TimedOut { kernel, seconds } => {
                write!(f, "kernel {kernel} timed out after {seconds:.0} s (killed)")
            }
            Unavailable::KernelFailed { kernel, message } => {
                write!(f, "kernel {kernel} failed: {message}")
            }
            Unavailable::Simulated { message } | Unavailable::Recorded { message } => {
                write!(f, "{message}")
            }
        }
    }
}
