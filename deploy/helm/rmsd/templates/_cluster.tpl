{{/*
rmsd.clusterChecks fails the render of cluster mode for values it cannot
run with; it renders nothing.
*/}}
{{- define "rmsd.clusterChecks" -}}
{{- if not (include "rmsd.databaseSecret" .) }}
{{- fail "cluster.enabled: cluster mode needs the PostgreSQL store every member shares; set database.url or database.existingSecret (SQLite cannot be shared)" }}
{{- end }}
{{- if .Values.persistence.existingClaim }}
{{- fail "cluster.enabled: persistence.existingClaim cannot be shared by the members; leave it empty (each member gets a state volume of its own)" }}
{{- end }}
{{- if lt (int .Values.cluster.replicas) 1 }}
{{- fail "cluster.replicas: at least 1" }}
{{- end }}
{{- if eq .Values.cluster.provider "etcd" }}
{{- if not .Values.cluster.etcd.endpoints }}
{{- fail "cluster.etcd.endpoints: provider etcd needs the etcd client URLs" }}
{{- end }}
{{- else if ne .Values.cluster.provider "kubernetes" }}
{{- fail (printf "cluster.provider: %q is not kubernetes or etcd" .Values.cluster.provider) }}
{{- end }}
{{- $cfg := .Values.config | default dict }}
{{- $server := get $cfg "server" | default dict }}
{{- $workflows := get $cfg "workflows" | default dict }}
{{- $drain := add (get $server "drain_delay_seconds" | default 0) (get $server "shutdown_grace_seconds" | default 0) (get $workflows "drain_timeout_seconds" | default 0) }}
{{- if le (int .Values.terminationGracePeriodSeconds) (int $drain) }}
{{- fail (printf "terminationGracePeriodSeconds: %v is not above the drain window (drain_delay_seconds + shutdown_grace_seconds + drain_timeout_seconds = %v): a rolling upgrade would kill members mid-drain" .Values.terminationGracePeriodSeconds $drain) }}
{{- end }}
{{- end }}

{{/*
rmsd.clusterConfig is the [cluster] table of cluster mode, as YAML. Each
member's id (its pod's name) and advertised address (its pod's IP) come
from the environment (rmsd.clusterEnv).
*/}}
{{- define "rmsd.clusterConfig" -}}
enabled: true
provider: {{ .Values.cluster.provider | quote }}
membership_timeout_seconds: {{ int .Values.cluster.membershipTimeoutSeconds }}
{{- if eq .Values.cluster.provider "etcd" }}
etcd_endpoints: {{ join "," .Values.cluster.etcd.endpoints | quote }}
etcd_prefix: {{ .Values.cluster.etcd.prefix | quote }}
{{- end }}
{{- end }}

{{/*
rmsd.clusterEnv is the member's identity from the downward API: its id is
the pod's name (stable in a StatefulSet), its actor remote listens and is
advertised on the pod's IP, which the Kubernetes provider announces too.
*/}}
{{- define "rmsd.clusterEnv" -}}
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
- name: RMS_CLUSTER__MEMBER_ID
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: RMS_CLUSTER__ADVERTISED_ADDRESS
  value: "$(POD_IP):{{ .Values.cluster.remotePort }}"
{{- end }}
