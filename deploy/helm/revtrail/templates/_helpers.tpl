{{/* The release's object names: the release name, or RELEASE-revtrail. */}}
{{- define "revtrail.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "revtrail.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: consume
{{- end -}}

{{- define "revtrail.labels" -}}
{{ include "revtrail.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "revtrail.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The Secret holding kafka.properties, "" when there is none. */}}
{{- define "revtrail.kafkaSecret" -}}
{{- if and .Values.kafka.existingSecret .Values.kafka.secretProperties -}}
{{- fail "kafka.existingSecret and kafka.secretProperties: give one" -}}
{{- end -}}
{{- if .Values.kafka.existingSecret -}}
{{- .Values.kafka.existingSecret -}}
{{- else if .Values.kafka.secretProperties -}}
{{- printf "%s-kafka" (include "revtrail.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "revtrail.kafkaSecretKey" -}}
{{- if .Values.kafka.existingSecret -}}
{{- .Values.kafka.existingSecretKey -}}
{{- else -}}
kafka.properties
{{- end -}}
{{- end -}}

{{/* The Secret holding the CA bundle, "" when there is none. */}}
{{- define "revtrail.caSecret" -}}
{{- if and .Values.kafka.ca.existingSecret .Values.kafka.ca.pem -}}
{{- fail "kafka.ca.existingSecret and kafka.ca.pem: give one" -}}
{{- end -}}
{{- if .Values.kafka.ca.existingSecret -}}
{{- .Values.kafka.ca.existingSecret -}}
{{- else if .Values.kafka.ca.pem -}}
{{- printf "%s-kafka-ca" (include "revtrail.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "revtrail.caKey" -}}
{{- if .Values.kafka.ca.existingSecret -}}
{{- .Values.kafka.ca.key -}}
{{- else -}}
ca.crt
{{- end -}}
{{- end -}}

{{/* consume's arguments: settings only, secrets come through -F. */}}
{{- define "revtrail.args" -}}
{{- $v := .Values -}}
{{- if not $v.kafka.topics -}}
{{- fail "kafka.topics: at least one topic" -}}
{{- end -}}
- consume
{{- with $v.kafka.brokers }}
- -b
- {{ . | quote }}
{{- end }}
{{- if include "revtrail.kafkaSecret" . }}
- -F
- /etc/revtrail/kafka/kafka.properties
{{- end }}
{{- range $k, $val := $v.kafka.properties }}
- -X
- {{ printf "%s=%v" $k $val | quote }}
{{- end }}
{{- $ca := include "revtrail.caSecret" . }}
{{- if $ca }}
- -X
- {{ printf "ssl.ca.location=/etc/revtrail/kafka-ca/%s" (include "revtrail.caKey" .) | quote }}
{{- end }}
{{- with $v.kafka.clientCert.existingSecret }}
- -X
- {{ printf "ssl.certificate.location=/etc/revtrail/kafka-user/%s" $v.kafka.clientCert.certKey | quote }}
- -X
- {{ printf "ssl.key.location=/etc/revtrail/kafka-user/%s" $v.kafka.clientCert.keyKey | quote }}
{{- end }}
{{- range $v.kafka.topics }}
{{- if or (not .name) (contains "@" .name) }}
{{- fail (printf "kafka.topics: a topic needs a name without '@', got %q" (.name | toString)) }}
{{- end }}
- -t
- {{ ternary (printf "%s@%s" .name .cluster) .name (not (empty .cluster)) | quote }}
{{- end }}
{{- range $v.kafka.helmTopics }}
{{- if or (not .name) (contains "@" (toString .name)) }}
{{- fail (printf "kafka.helmTopics: a topic needs a name without '@', got %q" (.name | toString)) }}
{{- end }}
{{- $helm := toString .name }}
{{- range $v.kafka.topics }}
{{- if eq (toString .name) $helm }}
{{- fail (printf "kafka.helmTopics: %q is in kafka.topics too (every instance reads a Helm topic whole: the group must not split it)" $helm) }}
{{- end }}
{{- end }}
- --helm-topic
- {{ ternary (printf "%s@%s" .name .cluster) .name (not (empty .cluster)) | quote }}
{{- end }}
- -G
- {{ required "kafka.group" $v.kafka.group | quote }}
{{- if $v.kafka.staticMembership }}
- -X
- group.instance.id=$(POD_NAME)
{{- end }}
- --db
- /var/lib/revtrail/revtrail.db
- --http
- {{ printf ":%v" $v.http.port | quote }}
- --log-format
- {{ $v.consume.logFormat | quote }}
- --status-interval
- {{ $v.consume.statusInterval | quote }}
{{- with $v.consume.retain }}
- --retain
- {{ . | quote }}
{{- end }}
{{- with $v.consume.maxRegistry }}
- --max-registry
- {{ . | quote }}
{{- end }}
{{- with $v.consume.batchMessages }}
- --batch-messages
- {{ . | quote }}
{{- end }}
{{- with $v.consume.batchMs }}
- --batch-ms
- {{ . | quote }}
{{- end }}
{{- with $v.consume.incidentsTopic }}
- --incidents-topic
- {{ . | quote }}
{{- end }}
{{- with $v.consume.cluster }}
- --cluster
- {{ . | quote }}
{{- end }}
{{- with $v.consume.readyLag }}
- --ready-lag
- {{ . | quote }}
{{- end }}
{{- range $v.consume.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}
