#!/bin/sh
# Hooks of the fake build (see README.md). $1: make | install.
SRC=$(cd "$(dirname "$0")" && pwd)
label=$(cat "$SRC/fake-label" 2>/dev/null || echo unlabelled)
case "$1" in
make)
    # A build that fails when continuing an earlier one (the incremental
    # build's fallback to a clean build is tested with it).
    if [ "$(cat "$SRC/fake-fails-incremental" 2>/dev/null)" = 1 ] && [ -e libcrypto.so.3 ]; then
        echo "fake-make: refusing to build over an earlier build" >&2
        exit 1
    fi
    noise=$(cat "$SRC/fake-make-noise" 2>/dev/null || echo 0)
    if [ "$noise" -gt 0 ]; then
        yes "fake-make: noise noise noise noise noise noise noise noise noise noise noise" | head -n "$noise"
    fi
    secs=$(cat "$SRC/fake-make-sleep" 2>/dev/null || echo 0)
    if [ "$secs" != 0 ] && [ -z "$PB_FAKE_NO_SLEEP" ]; then
        # The pid first: tests wait for the log line, then read the pid.
        if [ -n "$PB_FAKE_PIDFILE" ]; then echo $$ >>"$PB_FAKE_PIDFILE"; fi
        echo "fake-make: sleeping $secs s"
        exec sleep "$secs"
    fi
    ;;
install)
    # Like OpenSSL's install_dev on some 2022 master commits: the libraries
    # are built, the install fails. "nolibs": libssl is missing as well.
    fails=$(cat "$SRC/fake-install-fails" 2>/dev/null || echo 0)
    if [ "$fails" = nolibs ]; then rm -f libssl.so.3; fi
    if [ "$fails" != 0 ]; then
        echo "cp: cannot stat 'ssl/record/libssl.a': No such file or directory" >&2
        exit 1
    fi
    if [ -n "$PB_FAKE_LOG" ]; then echo "installed $label" >>"$PB_FAKE_LOG"; fi
    ;;
esac
