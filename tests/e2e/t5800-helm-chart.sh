#!/bin/sh
# The Helm chart (deploy/helm/revtrail), verified without a cluster: helm
# lint, then helm template with the default values and each of ci/*.yaml
# (a fleet, secured Kafka, Secrets made from values), every object decoded
# strictly into its Kubernetes API type by tests/chart (chartcheck), and
# what the values ask for found in the objects. A misspelled field in a
# scratch copy of the chart fails the check; deploy/kubernetes is the
# chart's current rendering; NOTES.txt tells how to read the incidents.
#
# helm and chartcheck are built with Go from the Go module proxy, once,
# into build/chart (tests/chart/tools.sh). Without go the test skips,
# unless REVTRAIL_REQUIRE_HELM=1 (as .ci/run sets), where it fails.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHART=$ROOT/deploy/helm/revtrail

if ! command -v "${GO:-go}" >/dev/null 2>&1; then
	if [ "${REVTRAIL_REQUIRE_HELM:-0}" = 1 ]; then
		_result 1 "go builds helm and chartcheck (REVTRAIL_REQUIRE_HELM=1)"
		done_testing
		exit
	fi
	echo "1..0 # SKIP no go to build helm and chartcheck"
	exit 0
fi
if ! "$ROOT/tests/chart/tools.sh" "$ROOT/build/chart" >"$T/tools.log" 2>&1; then
	_result 1 "tests/chart/tools.sh builds helm and chartcheck"
	diag "$(tail -c 3000 "$T/tools.log")"
	done_testing
	exit
fi
H=$ROOT/build/chart/helm
CHECK=$ROOT/build/chart/chartcheck
"$REVTRAIL" consume --help >"$T/consume-help" 2>&1

# render NAME [HELM-ARGS...]: helm template into $T/NAME.yaml, checked
# strictly by chartcheck, the objects as JSON in $T/NAME.json
render() {
	name=$1
	shift
	ok "$H" lint --strict "$CHART" "$@"
	"$H" template revtrail "$CHART" --namespace revtrail "$@" \
		>"$T/$name.yaml" 2>"$T/$name.err"
	is "$?:$(cat "$T/$name.err")" "0:" "helm template ($name)"
	"$CHECK" -json "$T/$name.json" "$T/$name.yaml" >"$T/$name.check" 2>&1
	is "$?:$(grep -v '^ok ' "$T/$name.check")" "0:" \
		"every object of $name decodes strictly and holds together"
	if python3 -c 'import yaml' 2>/dev/null; then
		is "$(python3 "$ROOT/tests/e2e/manifests.py" "$T/consume-help" "$T/$name.yaml" 2>&1)" "" \
			"$name: consume's options all in its --help, probes and scrapes on --http"
	fi
}
q() {   # q NAME JQ: jq on the objects of rendering NAME
	jq -c "$2" "$T/$1.json"
}
ARGS='.[] | select(.kind == "StatefulSet") | .spec.template.spec.containers[0].args'

render default
is "$(q default '[.[] | .kind] | sort')" '["Service","StatefulSet"]' \
	"default: a StatefulSet and its Service, no Namespace"
is "$(q default '[.[] | .metadata.namespace] | unique')" '["revtrail"]' \
	"every object in the release namespace"
is "$(q default '.[] | select(.kind == "StatefulSet") | [.spec.replicas, .spec.volumeClaimTemplates[0].metadata.name]')" \
	'[1,"db"]' "one instance, its database on a claim template"
is "$(q default "$ARGS | index(\"group.instance.id=\$(POD_NAME)\") > 0")" true \
	"a static group member named after its pod"
is "$(q default "$ARGS | index(\"--helm-topic\")")" null \
	"no --helm-topic unless kafka.helmTopics names one"
is "$(q default "$ARGS | [.[index(\"--http\") + 1], .[index(\"--db\") + 1]]")" \
	'[":8080","/var/lib/revtrail/revtrail.db"]' "--http :PORT, the database on the volume"
is "$(q default '.[] | select(.kind == "StatefulSet") | .spec.template.spec | [.securityContext.runAsUser, .securityContext.runAsNonRoot, .containers[0].securityContext.readOnlyRootFilesystem, (.volumes[] | select(.name == "tmp") | .emptyDir != null)]')" \
	'[10001,true,true,true]' "uid 10001, non-root, read-only root, /tmp an emptyDir"
is "$(q default '.[] | select(.kind == "Service") | [.spec.clusterIP, .metadata.annotations["prometheus.io/port"]]')" \
	'["None","8080"]' "a headless Service, annotated for Prometheus"
"$H" template revtrail "$CHART" --set service.prometheusAnnotations=false >"$T/noann.yaml"
"$CHECK" -json "$T/noann.json" "$T/noann.yaml" >/dev/null
is "$(q noann '.[] | select(.kind == "Service") | .metadata.annotations')" null \
	"or not, where Prometheus would scrape the pods twice"

render fleet -f "$CHART/ci/fleet-values.yaml"
is "$(q fleet '[.[] | .kind] | sort')" \
	'["PodDisruptionBudget","Service","ServiceMonitor","StatefulSet"]' \
	"fleet: a PodDisruptionBudget and a ServiceMonitor"
is "$(q fleet '.[] | select(.kind == "StatefulSet") | [.spec.replicas, .spec.volumeClaimTemplates[0].spec.resources.requests.storage, .spec.volumeClaimTemplates[0].spec.storageClassName]')" \
	'[3,"50Gi","fast-ssd"]' "three instances, a volume each"
is "$(q fleet "$ARGS | [index(\"prod-events@prod\"), index(\"prod-logs@prod\")] | map(. > 0)")" \
	'[true,true]' "-t TOPIC@CLUSTER"
is "$(q fleet "$ARGS | [.[index(\"prod-helm@prod\") - 1], .[index(\"shared-helm\") - 1]]")" \
	'["--helm-topic","--helm-topic"]' "--helm-topic TOPIC[@CLUSTER] from kafka.helmTopics"
for o in "-G revtrail-prod" "--retain 30d" "--max-registry 512M" \
	"--batch-messages 5000" "--batch-ms 2000" \
	"--incidents-topic revtrail-incidents" "--ready-lag 10000" \
	"-X client.rack=zone-a"; do
	is "$(q fleet "$ARGS | .[index(\"${o%% *}\") + 1]")" "\"${o#* }\"" "$o"
done
is "$(q fleet '.[] | select(.kind == "ServiceMonitor") | [.spec.endpoints[0].port, .spec.endpoints[0].path, .metadata.labels.release]')" \
	'["http","/metrics","kube-prometheus-stack"]' "the ServiceMonitor scrapes /metrics on http"

render secure -f "$CHART/ci/secure-values.yaml"
is "$(q secure "$ARGS | [.[index(\"-F\") + 1], (.[] | select(startswith(\"ssl.\")))]")" \
	'["/etc/revtrail/kafka/kafka.properties","ssl.ca.location=/etc/revtrail/kafka-ca/ca.crt","ssl.certificate.location=/etc/revtrail/kafka-user/user.crt","ssl.key.location=/etc/revtrail/kafka-user/user.key"]' \
	"secured: the properties file with -F, the CA and client certificate by path"
is "$(q secure '[.[] | select(.kind == "StatefulSet") | .spec.template.spec.volumes[] | .secret.secretName // empty]')" \
	'["revtrail-kafka","my-cluster-cluster-ca-cert","revtrail-user"]' \
	"from the Secrets the values name"
is "$(q secure '.[] | select(.kind == "NetworkPolicy") | [.spec.ingress[0].ports[0].port, [.spec.egress[].ports[].port]]')" \
	'["http",[9092,9093,53,53]]' "a NetworkPolicy: scrapes in, brokers and DNS out"

render made -f "$CHART/ci/made-secret-values.yaml"
is "$(q made '[.[] | select(.kind == "Secret") | .metadata.name] | sort')" \
	'["revtrail-kafka","revtrail-kafka-ca"]' "Secrets made from values"
like "$(q made '.[] | select(.metadata.name == "revtrail-kafka") | .stringData["kafka.properties"]')" \
	'sasl.password=SECRET' "the credentials in the properties file"
unlike "$(q made "$ARGS")" 'SECRET|KEY|sasl\.' "and never in the arguments"

# Values that cannot work fail the rendering, with the key to fix.
for bad in "kafka.existingSecret=x,kafka.secretProperties.a=b" \
	"kafka.ca.existingSecret=x,kafka.ca.pem=y" "kafka.topics[0].name=a@b" \
	"kafka.helmTopics[0].name=h@c" "kafka.helmTopics[0].name=k8s-events"; do
	"$H" template revtrail "$CHART" --set "$bad" >/dev/null 2>"$T/bad.err"
	like "$?:$(cat "$T/bad.err")" '^1:.*kafka\.(existingSecret|ca|topics|helmTopics)' "refused: $bad"
done
"$H" template revtrail "$CHART" --set-string 'kafka.secretProperties.a=x
b=y' >/dev/null 2>"$T/bad.err"
like "$?:$(cat "$T/bad.err")" '^1:.*one line' "refused: a property value with a newline"

# A template that breaks an object fails: a misspelled field, a field in
# the wrong case (encoding/json alone would take it), a selector that no
# longer selects its pods.
for edit in "s/readinessProbe:/readinesProbe:/" "s/  serviceName:/  ServiceName:/" \
	's/{{- include "revtrail.selectorLabels" . | nindent 6 }}/app: revtrail/'; do
	rm -rf "$T/broken"
	cp -r "$CHART" "$T/broken"
	sed -i "$edit" "$T/broken/templates/statefulset.yaml"
	if cmp -s "$CHART/templates/statefulset.yaml" "$T/broken/templates/statefulset.yaml"; then
		_result 1 "the edit $edit changes the chart"
	fi
	"$H" template revtrail "$T/broken" >"$T/broken.yaml" 2>&1
	"$CHECK" "$T/broken.yaml" >"$T/broken.check" 2>&1
	like "$?:$(grep -m 1 '^not ok' "$T/broken.check")" \
		'^1:not ok .*(unknown field "spec.template.spec.containers\[0\].readinesProbe"|unknown field "spec.ServiceName"|does not select)' \
		"chartcheck fails the chart after $edit"
done

# deploy/kubernetes: the chart's rendering, up to date.
mkdir "$T/raw"
"$ROOT/deploy/helm/render-manifests.sh" "$H" "$T/raw"
ok diff -r "$ROOT/deploy/kubernetes" "$T/raw"
"$CHECK" "$T/raw/revtrail.yaml" >"$T/raw.check" 2>&1 &&
	"$CHECK" "$T/raw/revtrail-fleet.yaml" >>"$T/raw.check" 2>&1
is "$?:$(grep -v '^ok ' "$T/raw.check")" "0:" "and strictly valid, its Namespace too"

# NOTES.txt, rendered through a scratch chart that turns it into a
# ConfigMap (helm template does not print notes).
rm -rf "$T/notes"
cp -r "$CHART" "$T/notes"
{ echo '{{- define "notes" -}}'; cat "$CHART/templates/NOTES.txt"; echo '{{- end -}}'; } \
	>"$T/notes/templates/_notes.tpl"
rm "$T/notes/templates/NOTES.txt"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  notes: |\n{{ include "notes" . | indent 4 }}\n' \
	>"$T/notes/templates/notes.yaml"
"$H" template revtrail "$T/notes" -n revtrail -s templates/notes.yaml >"$T/notes.out" 2>&1
N=$(cat "$T/notes.out")
like "$N" 'kubectl exec -n revtrail revtrail-0 -- revtrail incidents --db /var/lib/revtrail/revtrail.db' \
	"NOTES: how to read the incidents"
like "$N" '--create-namespace' "that the chart makes no Namespace"
like "$N" 'cluster-ca-cert -n revtrail --from-file=ca.crt' "how to copy Strimzi's CA"
"$H" template revtrail "$T/notes" -n revtrail -s templates/notes.yaml \
	-f "$CHART/ci/fleet-values.yaml" >"$T/notes.out" 2>&1
like "$(cat "$T/notes.out")" 'seq 0 2\); do kubectl exec -n revtrail revtrail-\$i -- revtrail incidents' \
	"and for a fleet, each pod's"
done_testing
