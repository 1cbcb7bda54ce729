//! Callgrind's client request that switches instrumentation on, so that the sampling child runs
//! its start-up (the binary's own, libcrypto's initialisation, the kernel's setup and warm-up)
//! uninstrumented under `--instr-atstart=no` and callgrind instruments only from the measured
//! loop on. The counts do not change: they are collected inside `perfbisect_measured_run` only,
//! which is entered after instrumentation is on. What it saves is valgrind's time (see
//! [`crate::measure::metric::callgrind_args`]).
//!
//! A client request is a fixed instruction sequence that does nothing on a real CPU and that
//! valgrind recognises (valgrind.h, "VALGRIND_DO_CLIENT_REQUEST"). It is written here rather
//! than taken from a crate because the crates that wrap it compile valgrind's C headers, which
//! would make valgrind a build dependency of perfbisect.

/// Whether this target can ask callgrind to start instrumenting: where it cannot, the child is
/// instrumented from the start, as before.
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

/// `VG_USERREQ__START_INSTRUMENTATION` of callgrind.h: `VG_USERREQ_TOOL_BASE('C','T') + 4`.
const START_INSTRUMENTATION: u64 = ((b'C' as u64) << 24 | (b'T' as u64) << 16) + 4;

/// `VG_USERREQ__STOP_INSTRUMENTATION`, the next request of callgrind.h.
const STOP_INSTRUMENTATION: u64 = START_INSTRUMENTATION + 1;

/// Asks callgrind to instrument from here on; a no-op outside valgrind.
pub fn start_instrumentation() {
    request(START_INSTRUMENTATION, 0);
}

/// Asks callgrind to stop instrumenting (what runs after the measured loop is not collected);
/// a no-op outside valgrind.
pub fn stop_instrumentation() {
    request(STOP_INSTRUMENTATION, 0);
}

/// Client request `code`; valgrind's answer, or `default` when no valgrind runs the process.
#[cfg(target_arch = "x86_64")]
fn request(code: u64, default: u64) -> u64 {
    let args: [u64; 6] = [code, 0, 0, 0, 0, 0];
    let mut answer = default;
    // SAFETY: the four rotations of rdi add up to 128 bits (rdi is unchanged) and the exchange
    // of rbx with itself changes nothing; valgrind reads the request from the array rax points
    // to and writes its answer to rdx.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") answer,
            in("rax") args.as_ptr(),
            options(nostack),
        );
    }
    answer
}

#[cfg(not(target_arch = "x86_64"))]
fn request(_code: u64, default: u64) -> u64 {
    default
}

#[cfg(test)]
mod tests {
    /// Outside valgrind the sequence runs as plain instructions and leaves the default
    /// answer in place (how valgrind.h's RUNNING_ON_VALGRIND tells the two apart).
    #[test]
    fn outside_valgrind_the_request_answers_its_default() {
        assert_eq!(super::request(super::START_INSTRUMENTATION, 0x5a5a), 0x5a5a);
    }

    #[test]
    fn the_request_code_is_callgrinds() {
        // callgrind.h: DUMP_STATS = base, then ZERO_STATS, TOGGLE_COLLECT, DUMP_STATS_AT,
        // START_INSTRUMENTATION, STOP_INSTRUMENTATION.
        assert_eq!(super::START_INSTRUMENTATION, 0x4354_0004);
        assert_eq!(super::STOP_INSTRUMENTATION, 0x4354_0005);
    }
}
