{{/* Names and labels. */}}
{{- define "hermes.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "hermes.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one service: (dict "root" $ "name" "gateway"). */}}
{{- define "hermes.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "hermes.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "hermes.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "hermes.natsSecretName" -}}
{{- default (printf "%s-nats" (include "hermes.fullname" .)) .Values.nats.auth.existingSecret -}}
{{- end -}}

{{- define "hermes.llmSecretName" -}}
{{- default (printf "%s-llm" (include "hermes.fullname" .)) .Values.llm.existingSecret -}}
{{- end -}}

{{/* The runtime jobs stream for the subject prefix, as subjectsFor() in libs/contracts names it. */}}
{{- define "hermes.runtimeJobsStream" -}}
{{- printf "%s_RUNTIME_JOBS" (.Values.subjectPrefix | upper | replace "-" "_") -}}
{{- end -}}

{{/* The ahead lane's stream (work of tasks already running), as subjectsFor() names it. */}}
{{- define "hermes.runtimeJobsAheadStream" -}}
{{- printf "%s_RUNTIME_JOBS_AHEAD" (.Values.subjectPrefix | upper | replace "-" "_") -}}
{{- end -}}

{{/* Environment of the LLM client (runtime and memory). */}}
{{- define "hermes.llmEnv" -}}
- name: OPENAI_BASE_URL
  value: {{ .Values.llm.baseUrl | quote }}
- name: OPENAI_API_KEY
  valueFrom:
    secretKeyRef: { name: {{ include "hermes.llmSecretName" . }}, key: openai-api-key }
- name: HERMES_MODEL_WORKER
  value: {{ .Values.llm.models.worker | quote }}
{{- with .Values.llm.models.planner }}
- name: HERMES_MODEL_PLANNER
  value: {{ . | quote }}
{{- end }}
{{- with .Values.llm.models.summarizer }}
- name: HERMES_MODEL_SUMMARIZER
  value: {{ . | quote }}
{{- end }}
- name: HERMES_MODEL_EMBEDDER
  value: {{ .Values.llm.models.embedder | quote }}
- name: LLM_POOLS
  value: {{ .Values.llm.pools | toJson | quote }}
- name: LLM_DEFAULT_CAPACITY
  value: {{ .Values.llm.defaultCapacity | quote }}
- name: LLM_TIMEOUT_MS
  value: {{ .Values.llm.timeoutMs | quote }}
- name: LLM_MAX_RETRIES
  value: {{ .Values.llm.maxRetries | quote }}
- name: LLM_HTTP_CLIENT
  value: {{ .Values.llm.httpClient | quote }}
{{- end -}}

{{/*
One service's Deployment: (dict "root" $ "name" "gateway" "env" <list of extra env> "envFrom" <list>
"volumes" <list> "volumeMounts" <list> "ports" <list of extra container ports> "autoscaled" <bool>). Everything a service shares is here,
so the five service templates differ only in what is really theirs.
*/}}
{{- define "hermes.deployment" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $svc := index $root.Values $name -}}
{{- $fullname := printf "%s-%s" (include "hermes.fullname" $root) $name -}}
{{- $natsUser := index $root.Values.nats.auth.users $name -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "hermes.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  {{- if not .autoscaled }}
  replicas: {{ $svc.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "hermes.selectorLabels" (dict "root" $root "name" $name) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "hermes.selectorLabels" (dict "root" $root "name" $name) | nindent 8 }}
      annotations:
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- with $svc.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "hermes.serviceAccountName" $root }}
      automountServiceAccountToken: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      # SIGTERM: the service stops taking work and drains within SHUTDOWN_TIMEOUT_MS.
      terminationGracePeriodSeconds: {{ add (div $root.Values.common.shutdownTimeoutMs 1000) 5 }}
      containers:
        - name: {{ $name }}
          image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag | default $root.Chart.AppVersion }}"
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: ["node", "services/{{ $name }}/dist/main.js"]
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          ports:
            - { name: health, containerPort: {{ $root.Values.common.healthPort }} }
            {{- if $root.Values.telemetry.metricsPort }}
            - { name: metrics, containerPort: {{ $root.Values.telemetry.metricsPort }} }
            {{- end }}
            {{- with .ports }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          envFrom:
            - configMapRef: { name: {{ include "hermes.fullname" $root }}-common }
            {{- with .envFrom }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          env:
            - name: OTEL_SERVICE_NAME
              value: hermes-{{ $name }}
            {{- if $root.Values.nats.auth.enabled }}
            - name: NATS_USER
              value: {{ $natsUser | quote }}
            - name: NATS_PASSWORD
              valueFrom:
                secretKeyRef: { name: {{ include "hermes.natsSecretName" $root }}, key: {{ $name }} }
            - name: NATS_INBOX_PREFIX
              value: _INBOX_{{ $natsUser }}
            {{- end }}
            {{- with .env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- range $key, $value := $svc.env }}
            - name: {{ $key }}
              value: {{ $value | toString | quote }}
            {{- end }}
          livenessProbe:
            httpGet: { path: /healthz, port: health }
            {{- toYaml $root.Values.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet: { path: /readyz, port: health }
            {{- toYaml $root.Values.probes.readiness | nindent 12 }}
          startupProbe:
            httpGet: { path: /healthz, port: health }
            {{- toYaml $root.Values.probes.startup | nindent 12 }}
          resources:
            {{- toYaml $svc.resources | nindent 12 }}
          volumeMounts:
            - { name: tmp, mountPath: /tmp }
            {{- with .volumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: { sizeLimit: 256Mi }
        {{- with .volumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $svc.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $svc.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $svc.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}

{{/* One service's PodDisruptionBudget: (dict "root" $ "name" "gateway"). */}}
{{- define "hermes.pdb" -}}
{{- $svc := index .root.Values .name -}}
{{- if $svc.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "hermes.fullname" .root }}-{{ .name }}
  labels:
    {{- include "hermes.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .name }}
spec:
  maxUnavailable: {{ $svc.pdb.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "hermes.selectorLabels" (dict "root" .root "name" .name) | nindent 6 }}
{{- end }}
{{- end -}}
