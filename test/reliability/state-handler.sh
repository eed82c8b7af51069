#!/bin/sh
# The state dir suite's --exec handler; what it does is named in the run id:
#   run-sleep<d>-…  sleeps 0.<d> seconds, then passes
#   run-gate<n>-…   waits until the file "$STATE_TEST_GATE.<n>" exists, then passes
case "$RUNTASK_RUN_ID" in
  run-sleep*) d=${RUNTASK_RUN_ID#run-sleep}; sleep "0.${d%%-*}" ;;
  run-gate*) n=${RUNTASK_RUN_ID#run-gate}; n=${n%%-*}
    while [ ! -e "$STATE_TEST_GATE.$n" ]; do sleep 0.05; done ;;
  *) echo "unknown behaviour in $RUNTASK_RUN_ID"; exit 2 ;;
esac
echo '{"status":"passed","message":"checked"}'
