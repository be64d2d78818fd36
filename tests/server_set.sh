#!/usr/bin/env bash
# Runs a test against the server set CTest gave it. A test declared with
# RESOURCE_LOCK db in a build with LOCKBENCH_TEST_SERVER_SETS > 1 takes one
# `servers` slot (RESOURCE_GROUPS servers:1); CTest names the slot in
# CTEST_RESOURCE_GROUP_0_SERVERS ("id:1,slots:1"), and scripts/test exported
# that set's servers as LOCKBENCH_TEST_DB_SET1, LOCKBENCH_TEST_PARTNER_SET1, ...
# They become the test's LOCKBENCH_TEST_DB, LOCKBENCH_TEST_PARTNER, ... (a
# server the set lacks, e.g. PgBouncer, is unset: its tests skip as usual).
# Without a slot (test discovery, or ctest without the resource spec) the
# environment is left as it is.
set -euo pipefail
if [[ -n ${CTEST_RESOURCE_GROUP_0_SERVERS:-} ]]; then
  id=${CTEST_RESOURCE_GROUP_0_SERVERS#id:}
  id=${id%%,*}
  for server in DB PARTNER REDIS ETCD PGBOUNCER; do
    from=LOCKBENCH_TEST_${server}_SET${id}
    if [[ -n ${!from:-} ]]; then
      export "LOCKBENCH_TEST_${server}=${!from}"
    else
      unset "LOCKBENCH_TEST_${server}"
    fi
  done
fi
exec "$@"
