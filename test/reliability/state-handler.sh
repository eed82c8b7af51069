#!/bin/sh
# The state dir suite's --exec handler; what it does is named in the run id:
#   run-sleep<d>-…  sleeps 0.<d> seconds, then passes
#   run-gate<n>-…   waits until the file "$STATE_TEST_GATE.<n>" exists, then passes; gives up (fails) after
#                   120 s, so that a test that died before opening its gate leaves no handler polling forever
case "$RUNTASK_RUN_ID" in
  run-sleep*) d=${RUNTASK_RUN_ID#run-sleep}; sleep "0.${d%%-*}" ;;
  run-gate*) n=${RUNTASK_RUN_ID#run-gate}; n=${n%%-*}
    i=0
    while [ ! -e "$STATE_TEST_GATE.$n" ]; do
      i=$((i + 1)); [ "$i" -gt 2400 ] && { echo "gate $n never opened"; exit 3; }
      sleep 0.05
    done ;;
  *) echo "unknown behaviour in $RUNTASK_RUN_ID"; exit 2 ;;
esac
echo '{"status":"passed","message":"checked"}'
