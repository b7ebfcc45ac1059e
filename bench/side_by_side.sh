#!/usr/bin/env bash
# Goldset beside doccano 1.8.4 in one run: the harness of issue 20 (../shared/bench-anchors: the same REST client
# and the same 100,000 KLUE sentences against doccano on its default setup, then Goldset as README.md deploys it),
# run from a private copy whose ports, PostgreSQL database and Redis database can be changed, so that two runs on
# one machine do not collide. Prints the harness's log and its last line, one JSON object of ratios.
#
# usage (from the project's root, after the README's setup):  bench/side_by_side.sh
# Env:  ANCHORS (../shared/bench-anchors)   WORK (/tmp/bench-anchors: venvs, data, logs, results)
#       DOCCANO_PORT (18021) GOLDSET_PORT (18022) BENCH_DB (bench_anchor_goldset) BENCH_REDIS_DB (9)
#       CORPUS (cycled: the harness's sentences with ~7 near copies each | unique: every row two different
#       sentences, so no row is a near copy of another)
#       GUNICORN_ARGS (-c config/gunicorn.conf.py, the README's web command)
#       and the harness's own: N_IMPORT N_ANNOT REPEATS PHASES GOLDSET_PY KLUE_DATA_DIR
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ANCHORS=$(cd "${ANCHORS:-$ROOT/../shared/bench-anchors}" && pwd)
export WORK=${WORK:-/tmp/bench-anchors} KLUE_DATA_DIR=${KLUE_DATA_DIR:-$ANCHORS/../klue}
DP=${DOCCANO_PORT:-18021} GP=${GOLDSET_PORT:-18022} DB=${BENCH_DB:-bench_anchor_goldset} RDB=${BENCH_REDIS_DB:-9}
COPY=$WORK/anchors
rm -rf "$COPY"; mkdir -p "$WORK"; cp -r "$ANCHORS" "$COPY"; chmod -R u+w "$COPY"

# The harness fixes its ports, database and Redis database on one line (and names the Redis database to flush).
settings="PD=18021 PG=18022 DB=bench_anchor_goldset REDIS=redis:\/\/127.0.0.1:6379\/9"
grep -q "^PASS=benchpass123 ${settings//\\/}$" "$COPY/side_by_side.sh" || {
  echo "the harness's settings line is not the expected one; update bench/side_by_side.sh" >&2; exit 2; }
sed -i -e "s/$settings/PD=$DP PG=$GP DB=$DB REDIS=redis:\/\/127.0.0.1:6379\/$RDB/" \
       -e "s/redis-cli -n 9 /redis-cli -n $RDB /g" "$COPY/side_by_side.sh"

if [ "${CORPUS:-cycled}" = unique ]; then
  # Row i: pool sentence i mod n, then another one that no other row pairs with it (the offset grows each cycle).
  cycled='rows = \[p\[i\] if i < len(p) else f"{p\[i % len(p)\]} ({i \/\/ len(p) + 1})" for i in range(n)\]'
  grep -q "$cycled" "$COPY/make_data.py" || { echo "the harness's make_data.py changed; update CORPUS=unique" >&2; exit 2; }
  sed -i "s/$cycled/rows = [f\"{p[i % len(p)]} {p[(i % len(p) + i \/\/ len(p) + 1) % len(p)]}\" for i in range(n)]/" \
    "$COPY/make_data.py"
fi

# Goldset's web server as README.md runs it, unless told otherwise (the harness's own default is the issue's --workers 4).
export GUNICORN_ARGS=${GUNICORN_ARGS:--c config/gunicorn.conf.py}
cd "$ROOT"
exec "$COPY/side_by_side.sh"
