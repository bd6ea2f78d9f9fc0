#!/bin/sh
# fixtures.sh: real-shaped Kafka messages as "KEY<TAB>VALUE" lines for
# `kcat -P -K '\t'` (docs/formats.md §5). Every message is distinct (its
# number is in the uid or the log text), so a count of stored events shows
# loss, and offsets show duplicates.
#
#   fixtures.sh exporter N [FIRST]   kubernetes-event-exporter Events, key = uid
#   fixtures.sh fluentbit N [FIRST]  Fluent Bit out_kafka records (@timestamp
#                                    a double, kubernetes map), key = pod
#   fixtures.sh vector N [FIRST]     Vector kafka sink records, key = namespace
#   fixtures.sh mixed N [FIRST]      the three interleaved, 30% untagged logs
#
# Releases web-0..web-9 in namespace shop; times one second apart from
# 2024-11-03T14:00:00Z so the incidents stay within the correlator's gap.
set -eu
kind=${1:?usage: fixtures.sh exporter|fluentbit|vector|mixed N [FIRST]}
n=${2:?N}
first=${3:-0}

exec awk -v kind="$kind" -v n="$n" -v first="$first" '
function iso(t,   d, s) {
	# seconds after 2024-11-03T14:00:00Z, under 10 days
	t += 14 * 3600
	d = 3 + int(t / 86400); s = t % 86400
	return sprintf("2024-11-%02dT%02d:%02d:%02dZ", d, int(s / 3600), int(s % 3600 / 60), s % 60)
}
function exporter(i,   t, rel, pod, uid, r, msg, reason, typ, kindo, name, fp) {
	t = iso(i); rel = "web-" (i % 10)
	pod = rel "-7d9c8b6f5-p" sprintf("%05d", int(i / 10) % 100000)
	uid = sprintf("9b2e%04x-1f0c-4d2e-8a6b-%012d", i % 65536, i)
	r = i % 5; kindo = "Pod"; name = pod; fp = "spec.containers{web}"; typ = "Warning"
	if (r == 0) { reason = "BackOff"; msg = "Back-off restarting failed container web in pod " pod "_shop(3f0c" i ")" }
	else if (r == 1) { reason = "FailedMount"; msg = "MountVolume.SetUp failed for volume \\\"config\\\" : configmap \\\"" rel "-config\\\" not found"; fp = "" }
	else if (r == 2) { reason = "Failed"; msg = "Failed to pull image \\\"registry.example.com/web:1." i "\\\": rpc error: code = NotFound desc = failed to pull and unpack image \\\"registry.example.com/web:1." i "\\\": not found" }
	else if (r == 3) { reason = "Unhealthy"; msg = "Readiness probe failed: HTTP probe failed with statuscode: 503" }
	else { reason = "OOMKilling"; msg = "Memory cgroup out of memory: Killed process " (1000 + i % 50000) " (java) total-vm:4096000kB"; kindo = "Node"; name = "node-" (i % 3); fp = "" }
	printf "%s\t{\"metadata\":{\"name\":\"%s.%x\",\"namespace\":\"shop\",\"uid\":\"%s\",\"resourceVersion\":\"%d\",\"creationTimestamp\":\"%s\"},", uid, name, 1000000 + i, uid, 500000 + i, t
	printf "\"reason\":\"%s\",\"message\":\"%s\",\"source\":{\"component\":\"kubelet\",\"host\":\"node-%d\"},", reason, msg, i % 3
	printf "\"firstTimestamp\":\"%s\",\"lastTimestamp\":\"%s\",\"count\":1,\"type\":\"%s\",\"eventTime\":null,", t, t, typ
	printf "\"reportingComponent\":\"kubelet\",\"reportingInstance\":\"node-%d\",\"clusterName\":\"prod\",", i % 3
	printf "\"involvedObject\":{\"kind\":\"%s\",\"namespace\":\"shop\",\"name\":\"%s\",\"uid\":\"3f0c%d\",\"apiVersion\":\"v1\",\"resourceVersion\":\"%d\"", kindo, name, i, 400000 + i
	if (fp != "") printf ",\"fieldPath\":\"%s\"", fp
	if (kindo == "Pod") printf ",\"labels\":{\"app.kubernetes.io/instance\":\"%s\",\"pod-template-hash\":\"7d9c8b6f5\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"%s-7d9c8b6f5\",\"uid\":\"aa%d\",\"controller\":true,\"blockOwnerDeletion\":true}]", rel, rel, i % 10
	printf ",\"deleted\":false}}\n"
}
function logtext(i, tagged,   r) {
	if (!tagged) return "GET /api/v1/items/" i " 200 " (i % 97) "ms"
	r = i % 4
	if (r == 0) return "dial tcp 10.0.3." (i % 250) ":5432: connect: connection refused (request " i ")"
	if (r == 1) return "error: database schema version " (20 + i % 7) " is dirty, refusing to start (attempt " i ")"
	if (r == 2) return "x509: certificate signed by unknown authority (conn " i ")"
	return "open /etc/web/config.yaml: no such file or directory (try " i ")"
}
function fluentbit(i, tagged,   rel, pod) {
	rel = "web-" (i % 10); pod = rel "-7d9c8b6f5-p" sprintf("%05d", int(i / 10) % 100000)
	printf "%s\t{\"@timestamp\":%d.%06d,\"time\":\"%s\",\"stream\":\"stderr\",\"_p\":\"F\",\"log\":\"%s\",", pod, 1730642400 + i, (i * 7919) % 1000000, iso(i), logtext(i, tagged)
	printf "\"kubernetes\":{\"pod_name\":\"%s\",\"namespace_name\":\"shop\",\"pod_id\":\"p%d\",\"labels\":{\"app.kubernetes.io/instance\":\"%s\",\"pod-template-hash\":\"7d9c8b6f5\"},\"annotations\":{},\"host\":\"node-%d\",\"container_name\":\"web\",\"docker_id\":\"d%d\",\"container_hash\":\"registry.example.com/web@sha256:ab\",\"container_image\":\"registry.example.com/web:1.2.3\"}}\n", pod, i, rel, i % 3, i
}
function vector(i, tagged,   rel, pod) {
	rel = "web-" (i % 10); pod = rel "-7d9c8b6f5-p" sprintf("%05d", int(i / 10) % 100000)
	printf "shop\t{\"message\":\"%s\",\"stream\":\"stderr\",\"timestamp\":\"%s\",\"source_type\":\"kubernetes_logs\",", logtext(i, tagged), iso(i)
	printf "\"file\":\"/var/log/pods/shop_%s_p%d/web/0.log\",\"kubernetes\":{\"pod_name\":\"%s\",\"pod_namespace\":\"shop\",\"pod_uid\":\"p%d\",\"pod_ip\":\"10.1.0.%d\",\"pod_labels\":{\"app.kubernetes.io/instance\":\"%s\",\"pod-template-hash\":\"7d9c8b6f5\"},\"pod_owner\":\"ReplicaSet/%s-7d9c8b6f5\",\"pod_node_name\":\"node-%d\",\"container_name\":\"web\",\"container_id\":\"containerd://c%d\",\"container_image\":\"registry.example.com/web:1.2.3\"}}\n", pod, i, pod, i, i % 250, rel, rel, i % 3, i
}
BEGIN {
	for (i = first; i < first + n; i++) {
		if (kind == "exporter") exporter(i)
		else if (kind == "fluentbit") fluentbit(i, 1)
		else if (kind == "vector") vector(i, 1)
		else if (kind == "mixed") {
			r = i % 10
			if (r < 4) exporter(i)
			else if (r < 7) fluentbit(i, r != 4)
			else vector(i, r != 7)
		} else { print "fixtures.sh: unknown kind " kind > "/dev/stderr"; exit 2 }
	}
}'
