#!/usr/bin/env bash
# Drives the interactive screens of the svc CLI in a real terminal (tmux), the way a person would:
# the sign-in form with a 2FA code, the tenant picker, the live log tail and the dashboard.
# Run by hand:  bash test/tty/run-tmux.sh      (needs tmux; CI has no TTY and does not run it)
# Uses DATABASE_URL when set, else the embedded database in a temp dir. Prints PASS/FAIL per step.
set -euo pipefail
cd "$(dirname "$0")/../.."

command -v tmux >/dev/null || { echo "tmux is not installed"; exit 1; }
WORK=$(mktemp -d)
PORT=$(node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')
SESSION="svc-tty-$$"
export SVC_BASE_URL="http://127.0.0.1:$PORT" XDG_CONFIG_HOME="$WORK/config" NO_COLOR=
unset SVC_API_KEY SVC_TENANT_ID SVC_PROFILE
FAILED=0
DAEMON_PID=""

cleanup() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

pass() { echo "PASS  $1"; }
fail() { echo "FAIL  $1"; FAILED=1; echo "----- screen -----"; tmux capture-pane -p -t "$SESSION" || true; echo "------------------"; }
screen() { tmux capture-pane -p -t "$SESSION"; }
# wait_for <text> [seconds]: until the pane shows the text.
wait_for() {
  local deadline=$((SECONDS + ${2:-20}))
  while [ $SECONDS -lt $deadline ]; do
    screen | grep -qF -- "$1" && return 0
    sleep 0.3
  done
  return 1
}
svc() { node bin/svc.js "$@"; }
# wait_shell: until the pane runs the shell again (the screen before has quit).
wait_shell() {
  for _ in $(seq 1 40); do
    [ "$(tmux display -p -t "$SESSION" '#{pane_current_command}')" != node ] && return 0
    sleep 0.5
  done
  return 1
}
# run_in_pane <command>: clears the pane first, so wait_for never matches the previous screen.
run_in_pane() {
  tmux send-keys -t "$SESSION" "clear" Enter
  for _ in $(seq 1 20); do [ "$(screen | grep -c .)" -le 1 ] && break; sleep 0.2; done
  tmux send-keys -t "$SESSION" "$1" Enter
}

echo "Starting the daemon on port $PORT (data in $WORK)…"
PORT=$PORT DATA_DIR="$WORK/data" LOG_LEVEL=warn node bin/svc.js daemon start >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 120); do curl -sf "$SVC_BASE_URL/health/ready" >/dev/null && break; sleep 0.5; done
curl -sf "$SVC_BASE_URL/health/ready" >/dev/null || { echo "daemon did not start"; cat "$WORK/daemon.log"; exit 1; }

EMAIL=person@tty.test
PASSWORD=correct-horse-battery
tmux new-session -d -s "$SESSION" -x 120 -y 40 -e "SVC_BASE_URL=$SVC_BASE_URL" -e "XDG_CONFIG_HOME=$XDG_CONFIG_HOME"
# 0. register in a terminal asks for the password, masked, twice.
run_in_pane "node bin/svc.js register --email $EMAIL --tenant Acme"
if wait_for "Choose a password" 30; then pass "register prompts for the password"; else fail "register prompts for the password"; fi
tmux send-keys -t "$SESSION" -l "$PASSWORD"; sleep 0.5
if screen | grep -qF "$PASSWORD"; then fail "register masks the password"; else pass "register masks the password"; fi
tmux send-keys -t "$SESSION" Enter; wait_for "Again" 10 || true
tmux send-keys -t "$SESSION" -l "$PASSWORD"; sleep 0.5; tmux send-keys -t "$SESSION" Enter
if wait_for "Registered $EMAIL" 30; then pass "registered from the prompt"; else fail "registered from the prompt"; exit 1; fi
svc tenants create "Beta Corp" --no-use --json >/dev/null
TOKEN=$(node -e 'const f=require(process.argv[1]);console.log(f.profiles.default.accessToken)' "$XDG_CONFIG_HOME/svc/profiles.json")
SECRET=$(curl -sf -X POST -H "authorization: Bearer $TOKEN" "$SVC_BASE_URL/auth/2fa/enable" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).secret))')
# Confirm with the previous step's code so the login below can use the current one (codes are single-use).
PREVIOUS=$(node --input-type=module -e "import { authenticator } from 'otplib'; console.log(authenticator.clone({ epoch: Date.now() - 30000 }).generate('$SECRET'))")
curl -sf -X POST -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d "{\"code\":\"$PREVIOUS\"}" "$SVC_BASE_URL/auth/2fa/verify" >/dev/null
svc logout >/dev/null 2>&1

# From here on a failed check is reported, not fatal.
set +e

# 1. Sign-in form with the authenticator code.
run_in_pane "node bin/svc.js login"
if wait_for "Sign in to $SVC_BASE_URL" 30; then pass "login form opens"; else fail "login form opens"; fi
# A typo fixed with a burst of Backspaces (one write), then Enter at once: no key may be lost.
tmux send-keys -t "$SESSION" -l "${EMAIL}XXX"; sleep 0.5; tmux send-keys -t "$SESSION" BSpace BSpace BSpace Enter
wait_for "Password" 10
if screen | grep -qE "E-mail +$EMAIL( |$)" && ! screen | grep -qF "XXX"; then pass "a burst of Backspaces is kept"; else fail "a burst of Backspaces is kept"; fi
tmux send-keys -t "$SESSION" -l "$PASSWORD"
sleep 1
if screen | grep -qF "$PASSWORD"; then fail "password is masked"; else pass "password is masked"; fi
tmux send-keys -t "$SESSION" Enter
if wait_for "Code" 15; then pass "daemon asks for the 2FA code"; else fail "daemon asks for the 2FA code"; fi
CODE=$(node --input-type=module -e "import { authenticator } from 'otplib'; console.log(authenticator.generate('$SECRET'))")
tmux send-keys -t "$SESSION" -l "$CODE"; sleep 0.5; tmux send-keys -t "$SESSION" Enter
if wait_for "Signed in as $EMAIL" 15; then pass "signed in with the code"; else fail "signed in with the code"; fi

# 2. Tenant picker.
run_in_pane "node bin/svc.js tenants use"
if wait_for "Choose the tenant to act in" 30; then pass "tenant picker opens"; else fail "tenant picker opens"; fi
tmux send-keys -t "$SESSION" -l "beta"; sleep 0.5; tmux send-keys -t "$SESSION" Enter
if wait_for "Now acting in Beta Corp" 15; then pass "picker chose Beta Corp"; else fail "picker chose Beta Corp"; fi
run_in_pane "node bin/svc.js tenants use"
wait_for "Choose the tenant" 30 || true
# The picker opens on the current tenant (Beta Corp, listed after Acme): one step up is Acme.
sleep 1; tmux send-keys -t "$SESSION" Up; sleep 1; tmux send-keys -t "$SESSION" Enter
if wait_for "Now acting in Acme" 15; then pass "arrows and Enter chose Acme"; else fail "arrows and Enter chose Acme"; fi

# 3. Live log tail: sends appear as they happen, pause, status filter, detail view.
KEY=$(svc keys create --name tty --environment test --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).key))')
send_one() {
  curl -sf -X POST -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
    -d "{\"from\":\"hello@acme.test\",\"to\":\"$1\",\"subject\":\"$2\",\"textBody\":\"Hello from tmux\"}" "$SVC_BASE_URL/emails/send" >/dev/null
}
run_in_pane "node bin/svc.js logs tail"
if wait_for "● live" 30; then pass "tail connects to the event stream"; else fail "tail connects to the event stream"; fi
send_one ada@example.com "First tmux send"
if wait_for "ada@example.com" 15; then pass "a new send appears live"; else fail "a new send appears live"; fi
if wait_for "SENT" 30; then pass "its status moves to SENT in place"; else fail "its status moves to SENT in place"; fi
tmux send-keys -t "$SESSION" p
sleep 0.5
send_one grace@example.com "Sent while paused"
sleep 3
if screen | grep -q "paused (" && ! screen | grep -qF "grace@example.com"; then pass "pause freezes the view"; else fail "pause freezes the view"; fi
tmux send-keys -t "$SESSION" p
if wait_for "grace@example.com" 10; then pass "resume shows what arrived"; else fail "resume shows what arrived"; fi
tmux send-keys -t "$SESSION" s
if wait_for "status: QUEUED" 5; then pass "s cycles the status filter"; else fail "s cycles the status filter"; fi
tmux send-keys -t "$SESSION" c; sleep 1
tmux send-keys -t "$SESSION" Up; sleep 1; tmux send-keys -t "$SESSION" Enter
if wait_for "Hello from tmux" 20; then pass "Enter opens the detail"; else fail "Enter opens the detail"; fi
tmux send-keys -t "$SESSION" Escape
sleep 1
if ! screen | grep -qF "Hello from tmux" && screen | grep -qF "q quit"; then pass "Esc closes the detail"; else fail "Esc closes the detail"; fi
tmux send-keys -t "$SESSION" q
# The view has quit when the pane runs the shell again instead of node.
quit=1
for _ in $(seq 1 30); do
  [ "$(tmux display -p -t "$SESSION" '#{pane_current_command}')" != node ] && { quit=0; break; }
  sleep 0.5
done
if [ $quit -eq 0 ]; then pass "q quits"; else fail "q quits"; fi

# 4. `svc` alone opens the dashboard; k jumps to the API keys.
run_in_pane "node bin/svc.js"
if wait_for "Quota this month" 30 && wait_for "First tmux send" 15; then pass "svc alone opens the dashboard with recent sends"; else fail "svc alone opens the dashboard with recent sends"; fi
tmux send-keys -t "$SESSION" k
if wait_for "svc dashboard › API keys" 30 && wait_for "svc_test_" 30; then pass "k opens the API keys inside the dashboard"; else fail "k opens the API keys inside the dashboard"; fi
tmux send-keys -t "$SESSION" Escape
if wait_for "Quota this month" 15; then pass "Esc comes back to the dashboard"; else fail "Esc comes back to the dashboard"; fi
tmux send-keys -t "$SESSION" q; wait_shell

# 5. A small terminal (60×15): header and key help stay on screen, nothing wraps.
tmux resize-window -t "$SESSION" -x 60 -y 15
run_in_pane "node bin/svc.js logs tail"
if wait_for "q quit" 30 && screen | grep -qF "Email log" && [ "$(screen | awk '{ if (length($0) > 60) n++ } END { print n+0 }')" = 0 ]; then pass "log tail fits 60×15"; else fail "log tail fits 60×15"; fi
tmux send-keys -t "$SESSION" q; wait_shell
run_in_pane "node bin/svc.js"
if wait_for "q quit" 45 && screen | grep -qF "svc dashboard"; then pass "dashboard fits 60×15"; else fail "dashboard fits 60×15"; fi
tmux send-keys -t "$SESSION" q

echo
[ $FAILED -eq 0 ] && echo "All interactive checks passed." || echo "Some interactive checks failed."
exit $FAILED
