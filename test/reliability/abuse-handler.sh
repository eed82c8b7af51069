#!/bin/sh
# The integrator abuse suite's --exec handler. What it does is named in the run id: run-<behaviour>-<n>.
case "$RUNTASK_RUN_ID" in
  *-pass-*) echo '{"status":"passed","message":"all good"}' ;;
  *-fail-*) echo "the check found problems"; exit 3 ;;
  # Killed by a signal: the whole process group, the shell that started the handler included.
  *-killed-*) kill -KILL 0 ;;
  *-term-*) kill -TERM 0; sleep 5 ;;
  *-segv-*) kill -SEGV $$ ;;
  # Garbage: binary noise, half a JSON document, 9 MB on one line, a flood on stderr.
  *-garbage-*) head -c 20000 /dev/urandom ;;
  *-brokenjson-*) printf '{"status": "passed", "outcomes": [' ;;
  *-huge-*) head -c 9000000 /dev/zero | tr '\0' 'x' ;;
  *-stderr-*) head -c 300000 /dev/zero | tr '\0' 'e' >&2; exit 1 ;;
  # Leaves a child holding stdout open after it exits.
  *-orphan-*) sleep 30 & echo '{"status":"passed","message":"left a child behind"}' ;;
  *) echo "unknown behaviour in $RUNTASK_RUN_ID"; exit 2 ;;
esac
