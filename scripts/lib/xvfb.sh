# Starts Xvfb on a free display for the scripts that open real windows (sourced by
# desktop-harness.sh, test-packages.sh, test_appimage.sh and bench-window.sh).
#
#   start_xvfb WORK_DIR LOG_FILE    sets XVFB_PID and exports DISPLAY; returns 1 when no display
#                                   could be started (the log names the last error)
#
# A random display in 100-999, not the lowest free one: on a machine where several runs (or
# other people's Xvfb) start and stop displays at the same time, the low numbers are where they
# collide (a client connecting to :0 can reach a server that is just going away). A number whose
# lock file or socket (path or abstract) exists is skipped; -displayfd reports readiness, so
# nothing polls the display with a client of its own.
# -noreset: without it Xvfb resets when its last client disconnects, and a window started during
# the reset (a test that closes one window and opens the next) fails with "Failed to initialize GTK".
start_xvfb() {
  local work="$1" log_file="$2" n
  XVFB_PID=""
  for _ in $(seq 20); do
    n=$((RANDOM % 900 + 100))
    { [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ]; } && continue
    grep -aq "/tmp/.X11-unix/X$n\$" /proc/net/unix 2>/dev/null && continue
    : >"$work/xvfb-display"
    Xvfb ":$n" -displayfd 3 -screen 0 1280x900x24 -nolisten tcp -noreset \
      3>"$work/xvfb-display" >"$log_file" 2>&1 &
    XVFB_PID=$!
    for _ in $(seq 100); do
      [ -s "$work/xvfb-display" ] && break
      kill -0 "$XVFB_PID" 2>/dev/null || break
      sleep 0.1
    done
    if [ -s "$work/xvfb-display" ]; then
      export DISPLAY=":$(tr -d '[:space:]' <"$work/xvfb-display")"
      unset WAYLAND_DISPLAY
      return 0
    fi
    echo "Xvfb could not use :$n: $(tail -n 2 "$log_file" | tr '\n' ' ')" >>"$work/xvfb-attempts.log"
    kill "$XVFB_PID" 2>/dev/null || true
    XVFB_PID=""
  done
  return 1
}
