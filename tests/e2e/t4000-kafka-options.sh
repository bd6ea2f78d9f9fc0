#!/usr/bin/env bash
# revtrail consume without a broker: option and property errors are usage
# errors (exit 2) that name the offending key, file and line; a consumer
# whose brokers are unreachable reports it, keeps retrying, and still shuts
# down promptly with exit 0 on SIGTERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"

run_rt consume -b 127.0.0.1:1 -G g --db "$T/x.db"
is "$RC" 2 "no -t is a usage error"
like "$(cat "$ERR")" 'TOPIC' "and says a topic is needed"

run_rt consume -b 127.0.0.1:1 -t t -G g -X no.such.prop=1 --db "$T/x.db"
is "$RC" 2 "an unknown -X property is a usage error"
like "$(cat "$ERR")" 'no\.such\.prop' "the error names the property"

run_rt consume -b 127.0.0.1:1 -t t -G g -X fetch.wait.max.ms=soon --db "$T/x.db"
is "$RC" 2 "a bad -X value is a usage error"
like "$(cat "$ERR")" 'fetch\.wait\.max\.ms' "the error names the property"

run_rt consume -b 127.0.0.1:1 -t t -G g -X enable.auto.commit=true --db "$T/x.db"
is "$RC" 2 "enable.auto.commit cannot be turned on"
like "$(cat "$ERR")" 'enable\.auto\.commit.*cannot be set' "and says why"

run_rt consume -b 127.0.0.1:1 -t t -G g -X bootstrap.servers --db "$T/x.db"
is "$RC" 2 "-X without = is a usage error"

printf '# SASL settings\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism = PLAIN\nsasl.username=svc\nsasl.password s3cret\n' >"$T/bad.properties"
run_rt consume -b 127.0.0.1:1 -t t -G g -F "$T/bad.properties" --db "$T/x.db"
is "$RC" 2 "a properties file with a malformed line is a usage error"
like "$(cat "$ERR")" 'bad\.properties:5:' "the error gives file and line"
unlike "$(cat "$ERR")" 's3cret' "and does not echo the secret"

printf 'client.id=x\nsasl.mechanismz=PLAIN\n' >"$T/typo.properties"
run_rt consume -b 127.0.0.1:1 -t t -G g -F "$T/typo.properties" --db "$T/x.db"
is "$RC" 2 "an unknown key in a properties file is a usage error"
like "$(cat "$ERR")" 'typo\.properties:2: sasl\.mechanismz' "the error gives line and key"

run_rt consume -b 127.0.0.1:1 -t t -G g -F "$T/missing.properties" --db "$T/x.db"
is "$RC" 2 "a missing properties file is a usage error"

run_rt consume -b 127.0.0.1:1 -t t --db "$T/x.db"
is "$RC" 2 "no group is a usage error"
like "$(cat "$ERR")" 'group' "and says a group is needed"

run_rt consume -b 127.0.0.1:1 -t t -G g --start sometime --db "$T/x.db"
is "$RC" 2 "a bad --start is a usage error"

run_rt consume -t t -G g --db "$T/x.db"
is "$RC" 2 "no brokers is a usage error"
like "$(cat "$ERR")" 'bootstrap\.servers' "and says which setting is missing"

# --helm-topic's errors name --helm-topic, not -t (its list is parsed alike).
long=$(printf 'h%.0s' $(seq 256))
run_rt consume -b 127.0.0.1:1 -t t -G g --helm-topic "$long" --db "$T/x.db"
is "$RC" 2 "a --helm-topic name over 255 characters is refused"
like "$(cat "$ERR")" '^revtrail consume: --helm-topic: topic name longer' "naming --helm-topic"
run_rt consume -b 127.0.0.1:1 -t t -G g --helm-topic 'h@a/b' --db "$T/x.db"
is "$RC" 2 "--helm-topic with a bad cluster is refused"
like "$(cat "$ERR")" '^revtrail consume: --helm-topic TOPIC@CLUSTER: ' "naming --helm-topic"
many=()
for i in $(seq 65); do many+=(--helm-topic "h$i"); done
run_rt consume -b 127.0.0.1:1 -t t -G g "${many[@]}" --db "$T/x.db"
is "$RC" 2 "65 --helm-topic's are refused"
like "$(cat "$ERR")" '^revtrail consume: too many --helm-topic$' "naming --helm-topic"
unlike "$(cat "$ERR")" ' -t' "and not -t"
many=()
for i in $(seq 65); do many+=(-t "t$i"); done
run_rt consume -b 127.0.0.1:1 -G g "${many[@]}" --db "$T/x.db"
like "$(cat "$ERR")" '^revtrail consume: too many -t$' "65 -t's still name -t"

run_rt consume --help
is "$RC" 0 "consume --help exits 0"
like "$(cat "$OUT")" '-X, --property PROP=VALUE' "help lists -X"

# Port 1 on loopback refuses connections: the consumer reports the brokers
# down, keeps retrying, and a SIGTERM still ends it promptly and cleanly.
printf 'client.id=revtrail-test\nreconnect.backoff.max.ms=500\n' >"$T/ok.properties"
BS=127.0.0.1:1
consume_bg down -t t -G g -F "$T/ok.properties" --db "$T/down.db" \
	--status-interval 1 --stats-json "$T/down.json"
wait_until 20 grep -q 'brokers are down' "$T/down.err"
ok grep -q 'brokers are down' "$T/down.err"
wait_until 10 test -s "$T/down.json"
is "$(jq -r .brokers_down "$T/down.json" 2>&1)" true "--stats-json reports the outage"
like "$(cat "$T/down.err")" 'brokers DOWN' "the status line reports the outage"
start=$(date +%s)
consume_kill down TERM
consume_wait down 15
is "$RC" 0 "SIGTERM with no broker exits 0"
end=$(date +%s)
ok test $((end - start)) -le 12
ok consume_clean down
done_testing
