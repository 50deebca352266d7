{{- define "rmsd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "rmsd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "rmsd.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "rmsd.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "rmsd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rmsd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "rmsd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "rmsd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The Service's name: service.name, else the full name. */}}
{{- define "rmsd.serviceName" -}}
{{- .Values.service.name | default (include "rmsd.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Secret with tls.crt, tls.key and ca.crt, or "" under tls.insecure. */}}
{{- define "rmsd.tlsSecret" -}}
{{- if not .Values.tls.insecure }}
{{- if .Values.tls.cert }}{{ include "rmsd.fullname" . }}-tls{{ else }}{{ required "tls.existingSecret or tls.cert/key/ca is required unless tls.insecure" .Values.tls.existingSecret }}{{ end }}
{{- end }}
{{- end }}

{{/* The Secret and key holding DATABASE_URL, as "name/key", or "". */}}
{{- define "rmsd.databaseSecret" -}}
{{- if .Values.database.url }}{{ include "rmsd.fullname" . }}-database/DATABASE_URL
{{- else if .Values.database.existingSecret }}{{ .Values.database.existingSecret }}/{{ .Values.database.existingSecretKey }}
{{- end }}
{{- end }}

{{/*
The configuration: .Values.config with the keys the chart owns set over it.
*/}}
{{- define "rmsd.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) }}
{{- $_ := set $cfg "port" (int .Values.port) }}
{{- $metrics := get $cfg "metrics" | default dict }}
{{- $_ = set $metrics "port" (int .Values.metricsPort) }}
{{- $_ = set $cfg "metrics" $metrics }}
{{- $tls := get $cfg "tls" | default dict }}
{{- if .Values.tls.insecure }}
{{- $_ = set $tls "insecure" true }}
{{- else }}
{{- $_ = set $tls "cert" "/etc/rms/tls/tls.crt" }}
{{- $_ = set $tls "key" "/etc/rms/tls/tls.key" }}
{{- $_ = set $tls "ca" "/etc/rms/tls/ca.crt" }}
{{- end }}
{{- $_ = set $cfg "tls" $tls }}
{{- $storage := get $cfg "storage" | default dict }}
{{- $_ = set $storage "sqlite_path" "/var/lib/rms/rmsd.db" }}
{{- $_ = set $cfg "storage" $storage }}
{{- if .Values.secrets.encryptionKey.secretName }}
{{- $_ = set $storage "encryption_key_file" "/etc/rms/store-key/store-keys" }}
{{- end }}
{{- $switches := get $cfg "switches" | default dict }}
{{- if .Values.secrets.switchCertDomains }}
{{- $_ = set $switches "switch_cert_root" "/etc/rms/switch-certs" }}
{{- end }}
{{- if .Values.secrets.clientTLSDomains }}
{{- $_ = set $switches "client_tls_root" "/etc/rms/client-tls" }}
{{- end }}
{{- if $switches }}
{{- $_ = set $cfg "switches" $switches }}
{{- end }}
{{- $workflows := get $cfg "workflows" | default dict }}
{{- $_ = set $workflows "firmware_dir" "/var/lib/rms/firmware" }}
{{- if .Values.secrets.nvssvt.secretName }}
{{- $_ = set $workflows "nvssvt_path" "/opt/nvssvt/bin/nvssvt" }}
{{- end }}
{{- if not (hasKey $workflows "nvssvt_log_dir") }}
{{- $_ = set $workflows "nvssvt_log_dir" "/var/lib/rms/nvssvt" }}
{{- end }}
{{- $_ = set $cfg "workflows" $workflows }}
{{- if .Values.cluster.enabled }}
{{- $_ = set $cfg "cluster" (include "rmsd.clusterConfig" . | fromYaml) }}
{{- end }}
{{- include "rmsd.toml" (dict "table" $cfg "prefix" "") }}
{{- end }}

{{/*
rmsd.toml renders a map as TOML: its scalar and list keys, then each map
key as a [prefix.key] table, recursively. Strings are JSON-quoted, which
TOML basic strings accept.
*/}}
{{- define "rmsd.toml" -}}
{{- $table := .table }}
{{- $prefix := .prefix }}
{{- range $k := keys $table | sortAlpha }}
{{- $v := get $table $k }}
{{- if not (kindIs "map" $v) }}
{{ $k }} = {{ toJson $v }}
{{- end }}
{{- end }}
{{- range $k := keys $table | sortAlpha }}
{{- $v := get $table $k }}
{{- if kindIs "map" $v }}
{{- $name := ternary $k (printf "%s.%s" $prefix $k) (eq $prefix "") }}

[{{ $name }}]
{{- include "rmsd.toml" (dict "table" $v "prefix" $name) }}
{{- end }}
{{- end }}
{{- end }}
