# Shared by scripts/test and scripts/demo: build, and the throw-away servers.
# Source it; it defines functions only.

# Resolved once, when sourced: callers may cd afterwards.
LOCKBENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lockbench_root() { echo "$LOCKBENCH_ROOT"; }

# lockbench_configure BUILD_DIR [cmake args...]: configure a release build.
lockbench_configure() {
  local build=$1
  shift
  cmake -S "$(lockbench_root)" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
}

# lockbench_build BUILD_DIR [cmake args...]: configure and build with every core.
lockbench_build() {
  lockbench_configure "$@"
  cmake --build "$1" -j"$(nproc)"
}

# lockbench_start_servers WORK_DIR BUILD_DIR: a throw-away PostgreSQL, a fake
# partner, a redis-server (redis-lease) and an etcd (etcd-lease) on loopback.
# Sets LOCKBENCH_DB, LOCKBENCH_PARTNER, LOCKBENCH_REDIS and LOCKBENCH_ETCD
# (LOCKBENCH_TEST_REDIS and LOCKBENCH_TEST_ETCD too). Stop them with
# lockbench_stop_servers WORK_DIR (register it in an EXIT trap).
# Also a throw-away PgBouncer (pool_mode transaction, 4 server connections) in
# front of that PostgreSQL: LOCKBENCH_PGBOUNCER (and LOCKBENCH_TEST_PGBOUNCER
# for the tests); left unset when PgBouncer cannot start.
lockbench_start_servers() {
  lockbench_start_databases "$1" && lockbench_use_databases "$1" && lockbench_start_partner "$1" "$2"
}

# The two halves of lockbench_start_servers, so that a caller can start the
# servers that need no build while it builds (scripts/test):
# lockbench_start_databases WORK_DIR: PostgreSQL, Redis, etcd and PgBouncer;
# their URLs go to WORK_DIR/servers.env (it may run in the background);
# lockbench_use_databases WORK_DIR sets the variables from that file, and
# lockbench_start_partner WORK_DIR BUILD_DIR starts the built fake partner.
lockbench_start_databases() {
  local work=$1 root db redis etcd pgbouncer=""
  root=$(lockbench_root)
  mkdir -p "$work"
  db=$("$root/scripts/pg" start "$work/pg" | tail -n 1) || return 1
  redis=$("$root/scripts/redis" start "$work/redis" | tail -n 1) || return 1
  etcd=$("$root/scripts/etcd" start "$work/etcd" | tail -n 1) || return 1
  if ! pgbouncer=$("$root/scripts/pgbouncer" start "$work/pgbouncer" "$db" transaction 4 | tail -n 1); then
    echo "PgBouncer did not start: its tests will be skipped" >&2
    pgbouncer=""
  fi
  printf 'LOCKBENCH_DB=%q\nLOCKBENCH_REDIS=%q\nLOCKBENCH_ETCD=%q\nLOCKBENCH_PGBOUNCER=%q\n' \
    "$db" "$redis" "$etcd" "$pgbouncer" >"$work/servers.env.tmp"
  mv "$work/servers.env.tmp" "$work/servers.env"
}

lockbench_use_databases() {
  local work=$1
  if [[ ! -f $work/servers.env ]]; then
    echo "the servers of $work did not start" >&2
    return 1
  fi
  # shellcheck source=/dev/null
  source "$work/servers.env"
  LOCKBENCH_TEST_REDIS=$LOCKBENCH_REDIS
  LOCKBENCH_TEST_ETCD=$LOCKBENCH_ETCD
  export LOCKBENCH_DB LOCKBENCH_REDIS LOCKBENCH_TEST_REDIS LOCKBENCH_ETCD LOCKBENCH_TEST_ETCD
  if [[ -n $LOCKBENCH_PGBOUNCER ]]; then
    LOCKBENCH_TEST_PGBOUNCER=$LOCKBENCH_PGBOUNCER
    export LOCKBENCH_PGBOUNCER LOCKBENCH_TEST_PGBOUNCER
  else
    unset LOCKBENCH_PGBOUNCER LOCKBENCH_TEST_PGBOUNCER
  fi
}

lockbench_start_partner() {
  local work=$1 build=$2
  "$build/fake_partner/server/fake_partner" --port 0 >"$work/partner.out" 2>"$work/partner.err" &
  echo $! >"$work/partner.pid"
  local line="" i
  for i in $(seq 1 100); do
    line=$(grep -m1 -o 'listening on 127.0.0.1:[0-9]*' "$work/partner.out" 2>/dev/null || true)
    [[ -n "$line" ]] && break
    sleep 0.1
  done
  if [[ -z "$line" ]]; then
    echo "fake_partner did not start:" >&2
    cat "$work/partner.err" >&2
    return 1
  fi
  LOCKBENCH_PARTNER="http://${line#listening on }"
  export LOCKBENCH_PARTNER
}

lockbench_stop_servers() {
  local work=$1
  if [[ -f "$work/partner.pid" ]]; then
    kill "$(cat "$work/partner.pid")" 2>/dev/null || true
    rm -f "$work/partner.pid"
  fi
  if [[ -d "$work/pgbouncer" ]]; then
    "$(lockbench_root)/scripts/pgbouncer" stop "$work/pgbouncer" >/dev/null 2>&1 || true
  fi
  if [[ -d "$work/etcd" ]]; then
    "$(lockbench_root)/scripts/etcd" stop "$work/etcd" >/dev/null 2>&1 || true
  fi
  if [[ -d "$work/redis" ]]; then
    "$(lockbench_root)/scripts/redis" stop "$work/redis" >/dev/null 2>&1 || true
  fi
  if [[ -d "$work/pg" ]]; then
    "$(lockbench_root)/scripts/pg" stop "$work/pg" >/dev/null 2>&1 || true
  fi
}
