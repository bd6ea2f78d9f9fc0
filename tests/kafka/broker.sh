#!/usr/bin/env bash
# broker.sh: a throwaway single-node Apache Kafka (KRaft) on loopback, from
# the official jars on Maven Central, for the Kafka tests and the benchmark.
#
#   broker.sh fetch                   jars -> $KAFKA_LIB (mvn, cached in ~/.m2)
#   broker.sh start DIR               format DIR, start a broker on a free
#                                     127.0.0.1 port; prints host:port
#   broker.sh topic DIR NAME [PARTS]  create a topic (default 1 partition)
#   broker.sh partitions DIR NAME N   give an existing topic N partitions
#   broker.sh stop DIR                stop it (TERM, then KILL), keep DIR
#   broker.sh kill DIR                SIGKILL it at once (throwaway data)
#   broker.sh resume DIR              start a stopped broker again, same
#                                     port and data (outage tests)
#
# Every wait is bounded. The broker listens on 127.0.0.1 only. DIR holds
# server.properties, data/, broker.log, pid and bootstrap (host:port).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
: "${KAFKA_LIB:=$ROOT/build/kafka/lib}"
: "${KAFKA_HEAP:=-Xms256m -Xmx1g}"
# Any valid 16-byte base64url id; the cluster lives only as long as DIR.
CLUSTER_ID=rEvTrAiLtEsTcLuStEr0AA

die() { echo "broker.sh: $*" >&2; exit 1; }

java_cp() { echo "$KAFKA_LIB/*"; }

cmd_fetch() {
	command -v mvn >/dev/null || die "mvn not found"
	command -v java >/dev/null || die "java not found"
	if [ -f "$KAFKA_LIB/.complete" ] &&
	   [ "$KAFKA_LIB/.complete" -nt "$HERE/pom.xml" ]; then
		return 0
	fi
	rm -rf "$KAFKA_LIB"
	mkdir -p "$KAFKA_LIB"
	# -B: no progress bars; -q: errors only. Resolved jars stay in ~/.m2.
	timeout 900 mvn -B -q -Dstyle.color=never -f "$HERE/pom.xml" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$KAFKA_LIB" >&2 ||
		die "mvn dependency:copy-dependencies failed"
	ls "$KAFKA_LIB"/kafka_2.13-*.jar >/dev/null 2>&1 || die "no kafka jar fetched"
	touch "$KAFKA_LIB/.complete"
}

# A port nobody listens on now. Races with other processes are possible but
# harmless: the broker then fails to bind and start says so.
free_port() {
	local p i
	for i in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then
			echo "$p"
			return 0
		fi
	done
	die "no free port found"
}

write_config() {   # DIR PORT CPORT
	cat > "$1/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$3
listeners=PLAINTEXT://127.0.0.1:$2,CONTROLLER://127.0.0.1:$3
advertised.listeners=PLAINTEXT://127.0.0.1:$2
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$1/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
group.consumer.session.timeout.ms=45000
log.flush.interval.messages=9223372036854775807
log.retention.hours=24
EOF
}

# A short-lived tool JVM (storage format, topic admin): small heap, bounded.
java_tool() {   # MAIN ARGS...
	timeout 120 java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Djava.awt.headless=true \
		-Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
		-cp "$(java_cp)" "$@"
}

cmd_start() {
	local dir=$1 port cport
	[ -f "$KAFKA_LIB/.complete" ] || cmd_fetch
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	rm -rf "$dir/data"
	port=$(free_port)
	cport=$(free_port)
	[ "$port" != "$cport" ] || cport=$(free_port)
	write_config "$dir" "$port" "$cport"
	: > "$dir/broker.log"
	java_tool kafka.tools.StorageTool format -t "$CLUSTER_ID" \
		-c "$dir/server.properties" >"$dir/format.log" 2>&1 ||
		die "storage format failed: $(tail -5 "$dir/format.log")"
	launch "$dir"
}

# Starts the JVM on an existing DIR (config, formatted data) and waits until
# it answers metadata requests.
launch() {
	local dir=$1 port pid i
	port=$(sed -n 's/^advertised.listeners=PLAINTEXT:\/\/127.0.0.1://p' "$dir/server.properties")
	# setsid: the broker gets its own process group so stop can end the
	# JVM and anything it spawned without touching our group.
	setsid java $KAFKA_HEAP -XX:+UseSerialGC -Djava.awt.headless=true \
		-Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
		-Dkafka.logs.dir="$dir" -cp "$(java_cp)" \
		kafka.Kafka "$dir/server.properties" >>"$dir/broker.log" 2>&1 &
	pid=$!
	echo "$pid" > "$dir/pid"
	echo "127.0.0.1:$port" > "$dir/bootstrap"
	# Ready when a metadata request lists the broker (kcat needs no JVM).
	for i in $(seq 1 120); do
		if ! kill -0 "$pid" 2>/dev/null; then
			die "broker exited: $(tail -20 "$dir/broker.log")"
		fi
		if timeout 5 kcat -b "127.0.0.1:$port" -L -m 3 >/dev/null 2>&1; then
			echo "127.0.0.1:$port"
			return 0
		fi
		sleep 0.5
	done
	cmd_stop "$dir"
	die "broker not ready after 60 s: $(tail -20 "$dir/broker.log")"
}

cmd_topic() {
	local dir=$1 name=$2 parts=${3:-1} bs
	bs=$(cat "$dir/bootstrap")
	java_tool org.apache.kafka.tools.TopicCommand \
		--bootstrap-server "$bs" --create --if-not-exists --topic "$name" \
		--partitions "$parts" --replication-factor 1 >"$dir/topic.log" 2>&1 ||
		die "create topic $name failed: $(tail -5 "$dir/topic.log")"
	wait_leaders "$bs" "$name" "$parts"
}

# More partitions for an existing topic.
cmd_partitions() {
	local dir=$1 name=$2 parts=$3 bs
	bs=$(cat "$dir/bootstrap")
	java_tool org.apache.kafka.tools.TopicCommand \
		--bootstrap-server "$bs" --alter --topic "$name" \
		--partitions "$parts" >"$dir/topic.log" 2>&1 ||
		die "alter topic $name failed: $(tail -5 "$dir/topic.log")"
	wait_leaders "$bs" "$name" "$parts"
}

wait_leaders() {   # BOOTSTRAP NAME PARTS
	local bs=$1 name=$2 parts=$3 i
	# Wait until every partition has a leader in the metadata.
	for i in $(seq 1 60); do
		if [ "$(timeout 5 kcat -b "$bs" -L -t "$name" -m 3 2>/dev/null |
			grep -c 'partition .*leader 1')" -ge "$parts" ]; then
			return 0
		fi
		sleep 0.25
	done
	die "topic $name has no leaders after 15 s"
}

cmd_stop() {
	local dir=$1 pid i
	[ -f "$dir/pid" ] || return 0
	pid=$(cat "$dir/pid")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 1 40); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.25
		done
		# A broker that does not stop in 10 s is killed with its group.
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/pid"
}

cmd_kill() {
	local dir=$1
	[ -f "$dir/pid" ] || return 0
	kill -KILL -- "-$(cat "$dir/pid")" 2>/dev/null ||
		kill -KILL "$(cat "$dir/pid")" 2>/dev/null || true
	rm -f "$dir/pid"
}

case "${1:-}" in
fetch) cmd_fetch ;;
start) [ $# -eq 2 ] || die "usage: broker.sh start DIR"; cmd_start "$2" ;;
topic) [ $# -ge 3 ] || die "usage: broker.sh topic DIR NAME [PARTITIONS]"; cmd_topic "$2" "$3" "${4:-1}" ;;
partitions) [ $# -eq 4 ] || die "usage: broker.sh partitions DIR NAME PARTITIONS"; cmd_partitions "$2" "$3" "$4" ;;
stop) [ $# -eq 2 ] || die "usage: broker.sh stop DIR"; cmd_stop "$2" ;;
kill) [ $# -eq 2 ] || die "usage: broker.sh kill DIR"; cmd_kill "$2" ;;
resume) [ $# -eq 2 ] || die "usage: broker.sh resume DIR"; launch "$(cd "$2" && pwd)" ;;
*) die "usage: broker.sh fetch|start DIR|topic DIR NAME [PARTS]|partitions DIR NAME N|stop DIR|kill DIR|resume DIR" ;;
esac
