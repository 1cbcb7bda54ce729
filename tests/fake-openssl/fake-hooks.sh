#!/bin/sh
# Hooks of the fake build (see README.md). $1: make | install.
SRC=$(cd "$(dirname "$0")" && pwd)
label=$(cat "$SRC/fake-label" 2>/dev/null || echo unlabelled)
case "$1" in
make)
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
    if [ -n "$PB_FAKE_LOG" ]; then echo "installed $label" >>"$PB_FAKE_LOG"; fi
    ;;
esac
