#!/usr/bin/env bash
# Reproduces the runs documented in docs/benchmarks.md.
#
#   scripts/bench.sh [all|load|crash|scale|mix|delete|cards|twonode|ab]   (default: all; mix, delete, cards, twonode and ab are not in all)
#
# Needs Go, a local PostgreSQL that takes postgres://postgres@127.0.0.1:5432
# (trust auth; override with PG=...), and pgbench on PATH. Results (text and
# JSON) go to $OUT (default ./bench-results). The PostgreSQL databases
# paymentsbench, paymentsbench_crash, paymentsbench_delete, paymentsbench_cards,
# paymentsbench_scale, paymentsbench_pgbench, paymentsbench_sw and paymentsbench_twonode are dropped and
# recreated. CS (load's concurrencies, default "8 64"), C (the other steps' concurrency, default 8), D and
# ROUNDS (load's repetitions, default 3) override the concurrency, duration and rounds; ab's A, B, PAIRS and
# ENGINE choose the two versions it alternates (see ab below).
set -euo pipefail
cd "$(dirname "$0")/.."

PG=${PG:-postgres://postgres@127.0.0.1:5432}
OUT=${OUT:-./bench-results}
C=${C:-8}
CS=${CS:-8 64}
D=${D:-60s}
ROUNDS=${ROUNDS:-3}
WHAT=${1:-all}
mkdir -p "$OUT"
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
go build -o "$BIN/paymentsd" ./cmd/paymentsd
go build -o "$BIN/paymentsbench" ./cmd/paymentsbench
PB=("$BIN/paymentsbench" -bin "$BIN/paymentsd" -pg-admin "$PG/postgres")

machine() {
	{
		echo "nproc: $(nproc)"
		grep MemTotal /proc/meminfo
		uname -sr
		go version
		psql "$PG/postgres" -Atc 'SHOW server_version' | sed 's/^/postgres: /'
		pgbench --version
	} | tee "$OUT/machine.txt"
}

load() {
	# Throughput and latency at each concurrency of $CS, side by side with the
	# classic baseline (pgbench tpcb-like, the plain SQLite loop) and the
	# same-work baseline (the statements of one transfer from paymentsd's
	# statement log, replayed by pgbench or a SQLite loop on a copy of the
	# run's database), $ROUNDS times (engines alternating, each round's
	# baselines right after its load), then the median and range of each
	# figure over the rounds, per engine and concurrency.
	local rounds=()
	for r in $(seq 1 "$ROUNDS"); do
		for c in $CS; do
			"${PB[@]}" -spawn -db "sqlite:$OUT/sqlite/bench.db" -customers 200 -c "$c" -d "$D" -compare \
				-json "$OUT/load-sqlite-c$c-$r.json" | tee "$OUT/load-sqlite-c$c-$r.txt"
			"${PB[@]}" -spawn -db "$PG/paymentsbench" -customers 200 -c "$c" -d "$D" -compare \
				-same-work-script "$OUT/samework-postgres.sql" \
				-json "$OUT/load-postgres-c$c-$r.json" | tee "$OUT/load-postgres-c$c-$r.txt"
			rounds+=("$OUT/load-sqlite-c$c-$r.json" "$OUT/load-postgres-c$c-$r.json")
		done
	done
	"$BIN/paymentsbench" summary -json "$OUT/load-summary.json" "${rounds[@]}" |
		tee "$OUT/load-summary.txt"
}

crash() {
	# SIGKILL every 3 s for 75 s (25 kills), same keys on retry, invariants after.
	"${PB[@]}" -spawn -db "sqlite:$OUT/crash/bench.db" -customers 50 -c "$C" -d 75s -crash-every 3s -grace 180s \
		-json "$OUT/crash-sqlite.json" | tee "$OUT/crash-sqlite.txt"
	"${PB[@]}" -spawn -db "$PG/paymentsbench_crash" -customers 50 -c "$C" -d 75s -crash-every 3s -grace 180s \
		-json "$OUT/crash-postgres.json" | tee "$OUT/crash-postgres.txt"
}

mix() {
	# As load and crash, with 30% of the transfers cross-currency (USD to EUR)
	# and 20% payouts to external bank accounts (sandbox ACH, settled after
	# the load; magic amounts fail or return about 0.6% of them).
	"${PB[@]}" -spawn -db "sqlite:$OUT/mix/bench.db" -customers 200 -c "$C" -d "$D" -fx 0.3 -payout 0.2 \
		-json "$OUT/mix-sqlite.json" | tee "$OUT/mix-sqlite.txt"
	"${PB[@]}" -spawn -db "$PG/paymentsbench" -customers 200 -c "$C" -d "$D" -fx 0.3 -payout 0.2 \
		-json "$OUT/mix-postgres.json" | tee "$OUT/mix-postgres.txt"
	"${PB[@]}" -spawn -db "sqlite:$OUT/mix-crash/bench.db" -customers 50 -c "$C" -d 75s -crash-every 3s -grace 180s \
		-fx 0.3 -payout 0.2 -json "$OUT/mix-crash-sqlite.json" | tee "$OUT/mix-crash-sqlite.txt"
	"${PB[@]}" -spawn -db "$PG/paymentsbench_crash" -customers 50 -c "$C" -d 75s -crash-every 3s -grace 180s \
		-fx 0.3 -payout 0.2 -json "$OUT/mix-crash-postgres.json" | tee "$OUT/mix-crash-postgres.txt"
}

delete() {
	# Crash mode with customers deleted during the load (issue 25): a SIGKILL
	# every 3 s, a customer retired every 2 s (drained to another, a payout
	# that the sandbox returns after the delete, then deleted), 30% payouts.
	# The checks count the platform's suspense account in the totals.
	for db in "sqlite:$OUT/delete/bench.db" "$PG/paymentsbench_delete"; do
		e=${db%%:*}
		"${PB[@]}" -spawn -db "$db" -customers 30 -c 4 -d 40s -crash-every 3s -grace 120s -delete-every 2s \
			-payout 0.3 -settle 60s -reads=false -json "$OUT/delete-$e.json" | tee "$OUT/delete-$e.txt"
	done
}

cards() {
	# Card traffic in the mix (issue 18): half the customers get a card, each
	# card owned by one worker; 30% of the operations are card network
	# messages (authorizations of every kind, declines, clearings, expiries,
	# reversals, advices, returns and return reversals) or card changes
	# (freeze, unfreeze, close and a replacement); then the same with a
	# SIGKILL every 3 s. Each outcome is read back until it shows (at most
	# -card-wait), so simulations may apply in the background. The checks add
	# the card holds, postings, declines and transactions
	# (docs/benchmarks.md, "Card traffic in the mix").
	for db in "sqlite:$OUT/cards/bench.db" "$PG/paymentsbench_cards"; do
		e=${db%%:*}
		"${PB[@]}" -spawn -db "$db" -customers 20 -c 4 -d 20s -cards 0.3 \
			-json "$OUT/cards-$e.json" | tee "$OUT/cards-$e.txt"
		"${PB[@]}" -spawn -db "$db" -customers 20 -c 4 -d 20s -cards 0.3 -crash-every 3s \
			-json "$OUT/cards-crash-$e.json" | tee "$OUT/cards-crash-$e.txt"
	done
}

twonode() {
	# Two paymentsd processes on one PostgreSQL database (issue 23), load
	# workers spread over both, beside one node: without crashes, then with
	# a SIGKILL every 3 s taking the nodes in turn (25 kills in 75 s), every
	# invariant checked after each run.
	for n in 1 2; do
		"${PB[@]}" -spawn -nodes "$n" -db "$PG/paymentsbench_twonode" -customers 200 -c "$C" -d "$D" \
			-json "$OUT/twonode-$n-load.json" | tee "$OUT/twonode-$n-load.txt"
	done
	for n in 1 2; do
		"${PB[@]}" -spawn -nodes "$n" -db "$PG/paymentsbench_twonode" -customers 50 -c "$C" -d 75s -crash-every 3s \
			-grace 180s -json "$OUT/twonode-$n-crash.json" | tee "$OUT/twonode-$n-crash.txt"
	done
}

scale() {
	# Read latency and memory at 10k and at 1M transactions: a short real run
	# makes templates, seed multiplies them in the database, audit re-checks the
	# ledger, reads measures; then 30 s of transfers on the 1M database.
	for db in "$PG/paymentsbench_scale" "sqlite:$OUT/scale/bench.db"; do
		e=${db%%:*}
		for n in 10000 1000000; do
			"${PB[@]}" -spawn -db "$db" -customers 20 -c "$C" -d 5s -reads=false \
				-json "$OUT/scale-$e-$n-setup.json" >/dev/null
			"$BIN/paymentsbench" seed -db "$db" -transactions "$n" | tee "$OUT/scale-$e-$n-seed.txt"
			"$BIN/paymentsbench" audit -db "$db" | tee -a "$OUT/scale-$e-$n-seed.txt"
			# The seed leaves gigabytes of dirty pages; let them reach the disk
			# first, so the reads measure the data's size, not the writeback.
			sync
			"$BIN/paymentsbench" reads -bin "$BIN/paymentsd" -db "$db" -n 200 \
				-json "$OUT/scale-$e-$n.json" | tee "$OUT/scale-$e-$n.txt"
		done
		"${PB[@]}" -spawn -reset=false -db "$db" -customers 20 -c "$C" -d 30s \
			-json "$OUT/scale-$e-1000000-load.json" | tee "$OUT/scale-$e-1000000-load.txt"
	done
}

ab() {
	# Two versions of paymentsd alternated on this machine (A and B: git
	# revisions, default HEAD~1 and HEAD): PAIRS pairs (default 6) of
	# D-long loads at concurrency C on ENGINE (postgres or sqlite), A then B
	# in each pair, without the reads and checks; then each pair's B over A
	# for the rate and the CPU per transfer, and their medians. Versions
	# compare only this way: a machine's rate drifts within minutes by more
	# than most changes move it.
	local eng=${ENGINE:-postgres} pairs=${PAIRS:-6} db reports=()
	build_rev a "${A:-HEAD~1}"
	build_rev b "${B:-HEAD}"
	db="$PG/paymentsbench"
	if [ "$eng" = sqlite ]; then db="sqlite:$OUT/ab/bench.db"; fi
	for i in $(seq 1 "$pairs"); do
		for v in a b; do
			"$BIN/paymentsbench" -bin "$BIN/paymentsd-$v" -pg-admin "$PG/postgres" -spawn -db "$db" -customers 200 \
				-c "$C" -d "$D" -reads=false -check=false -json "$OUT/ab-$v-$i.json" >"$OUT/ab-$v-$i.txt"
			reports+=("$OUT/ab-$v-$i.json")
		done
	done
	"$BIN/paymentsbench" pairs "${reports[@]}" | tee "$OUT/ab-pairs.txt"
}

# build_rev builds paymentsd at a git revision as $BIN/paymentsd-$1.
build_rev() {
	local wt
	wt=$(mktemp -d)
	git worktree add -q --detach "$wt" "$2"
	(cd "$wt" && go build -o "$BIN/paymentsd-$1" ./cmd/paymentsd)
	git worktree remove --force "$wt"
}

case "$WHAT" in
all) machine; load; crash; scale ;;
load) machine; load ;;
crash) crash ;;
scale) scale ;;
mix) mix ;;
delete) delete ;;
cards) cards ;;
twonode) twonode ;;
ab) ab ;;
*) echo "usage: $0 [all|load|crash|scale|mix|delete|cards|twonode|ab]" >&2; exit 2 ;;
esac
