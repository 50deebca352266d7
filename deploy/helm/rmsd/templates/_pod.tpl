{{/*
rmsd.podTemplate is the pod of the Deployment (single process) and of the
StatefulSet (cluster mode, statefulset.yaml): the same container, with the
cluster member's identity, remote port and service account added in
cluster mode.
*/}}
{{- define "rmsd.podTemplate" -}}
{{- $tlsSecret := include "rmsd.tlsSecret" . }}
{{- $dbSecret := include "rmsd.databaseSecret" . }}
{{- $serverName := .Values.probes.serverName | default (printf "%s.%s.svc" (include "rmsd.serviceName" .) .Release.Namespace) }}
metadata:
  labels:
    {{- include "rmsd.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    # Roll the pod when the rendered configuration or the chart's
    # Secrets change.
    checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
    checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  # No RMS_* service-link variables: a Service named "rms" would inject
  # RMS_PORT=tcp://..., which looks like an rmsd override to a reader.
  enableServiceLinks: false
  {{- if and .Values.cluster.enabled (eq .Values.cluster.provider "kubernetes") }}
  # The Kubernetes membership provider talks to the API server as this
  # account (rbac.yaml).
  serviceAccountName: {{ include "rmsd.fullname" . }}
  automountServiceAccountToken: true
  {{- else }}
  automountServiceAccountToken: false
  {{- end }}
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    fsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: rmsd
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args: ["--config", "/etc/rms/config.toml"]
      ports:
        - name: grpc
          containerPort: {{ .Values.port }}
          protocol: TCP
        - name: metrics
          containerPort: {{ .Values.metricsPort }}
          protocol: TCP
        {{- if .Values.cluster.enabled }}
        - name: remote
          containerPort: {{ .Values.cluster.remotePort }}
          protocol: TCP
        {{- end }}
      {{- if or .Values.tls.insecure $dbSecret .Values.extraEnv .Values.cluster.enabled }}
      env:
        {{- if .Values.cluster.enabled }}
        {{- include "rmsd.clusterEnv" . | nindent 8 }}
        {{- end }}
        {{- if .Values.tls.insecure }}
        - name: RMS_ALLOW_INSECURE
          value: "1"
        {{- end }}
        {{- if $dbSecret }}
        - name: DATABASE_URL
          valueFrom:
            secretKeyRef:
              name: {{ dir $dbSecret }}
              key: {{ base $dbSecret }}
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
      {{- if .Values.tls.insecure }}
      livenessProbe:
        grpc:
          port: {{ .Values.port }}
        {{- toYaml .Values.probes.liveness | nindent 8 }}
      readinessProbe:
        grpc:
          port: {{ .Values.port }}
        {{- toYaml .Values.probes.readiness | nindent 8 }}
      {{- else }}
      {{- $client := ternary "/etc/rms/probe-tls" "/etc/rms/tls" (ne .Values.probes.clientSecret "") }}
      {{- $probe := list "/usr/local/bin/rmsprobe" "--addr" (printf "127.0.0.1:%v" .Values.port) "--timeout" "4s" "--ca" "/etc/rms/tls/ca.crt" "--cert" (printf "%s/tls.crt" $client) "--key" (printf "%s/tls.key" $client) "--server-name" $serverName }}
      livenessProbe:
        exec:
          command: {{ toJson $probe }}
        {{- toYaml .Values.probes.liveness | nindent 8 }}
      readinessProbe:
        exec:
          command: {{ toJson $probe }}
        {{- toYaml .Values.probes.readiness | nindent 8 }}
      {{- end }}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: ["ALL"]
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: config
          mountPath: /etc/rms/config.toml
          subPath: config.toml
          readOnly: true
        {{- if $tlsSecret }}
        - name: tls
          mountPath: /etc/rms/tls
          readOnly: true
        {{- end }}
        {{- if and $tlsSecret .Values.probes.clientSecret }}
        - name: probe-tls
          mountPath: /etc/rms/probe-tls
          readOnly: true
        {{- end }}
        {{- with .Values.secrets.encryptionKey.secretName }}
        - name: store-key
          mountPath: /etc/rms/store-key
          readOnly: true
        {{- end }}
        {{- range $i, $domain := keys .Values.secrets.switchCertDomains | sortAlpha }}
        - name: switch-certs-{{ $i }}
          mountPath: /etc/rms/switch-certs/{{ $domain }}
          readOnly: true
        {{- end }}
        {{- range $i, $domain := keys .Values.secrets.clientTLSDomains | sortAlpha }}
        - name: client-tls-{{ $i }}
          mountPath: /etc/rms/client-tls/{{ $domain }}
          readOnly: true
        {{- end }}
        {{- with .Values.secrets.nvssvt.secretName }}
        - name: nvssvt
          mountPath: /opt/nvssvt/bin
          readOnly: true
        {{- end }}
        - name: state
          mountPath: /var/lib/rms
        {{- if and .Values.cluster.enabled .Values.cluster.firmwareClaim }}
        - name: firmware
          mountPath: /var/lib/rms/firmware
        {{- end }}
        - name: tmp
          mountPath: /tmp
        {{- with .Values.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "rmsd.fullname" . }}-config
    {{- if $tlsSecret }}
    - name: tls
      secret:
        secretName: {{ $tlsSecret }}
    {{- end }}
    {{- if and $tlsSecret .Values.probes.clientSecret }}
    - name: probe-tls
      secret:
        secretName: {{ .Values.probes.clientSecret }}
    {{- end }}
    {{- if and .Values.cluster.enabled .Values.persistence.enabled }}
    {{- /* each member's from the StatefulSet's volumeClaimTemplates */}}
    {{- else }}
    - name: state
      {{- if .Values.persistence.enabled }}
      persistentVolumeClaim:
        claimName: {{ .Values.persistence.existingClaim | default (printf "%s-state" (include "rmsd.fullname" .)) }}
      {{- else }}
      emptyDir: {}
      {{- end }}
    {{- end }}
    - name: tmp
      emptyDir: {}
    {{- if and .Values.cluster.enabled .Values.cluster.firmwareClaim }}
    - name: firmware
      persistentVolumeClaim:
        claimName: {{ .Values.cluster.firmwareClaim }}
    {{- end }}
    {{- with .Values.secrets.encryptionKey }}
    {{- if .secretName }}
    - name: store-key
      secret:
        secretName: {{ .secretName }}
        defaultMode: 0440
        items:
          - key: {{ .key }}
            path: store-keys
    {{- end }}
    {{- end }}
    {{- range $i, $domain := keys .Values.secrets.switchCertDomains | sortAlpha }}
    - name: switch-certs-{{ $i }}
      secret:
        secretName: {{ get $.Values.secrets.switchCertDomains $domain }}
        defaultMode: 0440
    {{- end }}
    {{- range $i, $domain := keys .Values.secrets.clientTLSDomains | sortAlpha }}
    - name: client-tls-{{ $i }}
      secret:
        secretName: {{ get $.Values.secrets.clientTLSDomains $domain }}
        defaultMode: 0440
    {{- end }}
    {{- with .Values.secrets.nvssvt }}
    {{- if .secretName }}
    - name: nvssvt
      secret:
        secretName: {{ .secretName }}
        defaultMode: 0550
        items:
          - key: {{ .key }}
            path: nvssvt
    {{- end }}
    {{- end }}
    {{- with .Values.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
