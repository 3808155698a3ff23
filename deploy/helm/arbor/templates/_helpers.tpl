{{/*
Names. With the release called "arbor" (as the docs install it) every object has the name
deploy/base gives it: arbor-api, arbor-reconciler, the Service "arbor" that the issuer URL
names. Another release name prefixes them instead; fullnameOverride fixes the prefix.
*/}}
{{- define "arbor.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
Labels on every object's metadata: deploy/base's part-of label, and Helm's own. Selectors
and pod templates carry only the name and component labels, exactly as deploy/base's do, so
`helm template` and `kubectl kustomize deploy/base` render the same specs.
*/}}
{{- define "arbor.labels" -}}
app.kubernetes.io/part-of: arbor
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The selector (and pod template) labels of one component: api, reconciler, migrate. */}}
{{- define "arbor.selector" -}}
app.kubernetes.io/name: arbor
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "arbor.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "arbor.issuerUrl" -}}
{{- .Values.issuerUrl | default (printf "http://%s.%s.svc:8080" (include "arbor.fullname" .) .Release.Namespace) -}}
{{- end -}}

{{- define "arbor.dbSecret" -}}
{{- if .Values.database.cnpg.enabled -}}
{{- printf "%s-db-app" (include "arbor.fullname" .) -}}
{{- else -}}
{{- .Values.database.existingSecret | default (printf "%s-db" (include "arbor.fullname" .)) -}}
{{- end -}}
{{- end -}}

{{/* DATABASE_URL: the operator's app Secret (key uri) with CloudNativePG, else yours. */}}
{{- define "arbor.databaseUrl" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "arbor.dbSecret" . }}
      key: {{ .Values.database.cnpg.enabled | ternary "uri" .Values.database.secretKey }}
{{- end -}}

{{/* The pod security context every Arbor pod runs with (restricted pod security). */}}
{{- define "arbor.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
{{- if .fsGroup }}
fsGroup: 1000
{{- end }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "arbor.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/*
The API's environment beyond deploy/base's: the database user and password (for the read
URL) and the read replica, and the keys replicas share.
*/}}
{{- define "arbor.apiEnvHa" -}}
{{- $cnpg := .Values.database.cnpg.enabled -}}
{{- if $cnpg }}
- name: ARBOR_DB_USER
  valueFrom:
    secretKeyRef:
      name: {{ include "arbor.dbSecret" . }}
      key: username
- name: ARBOR_DB_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "arbor.dbSecret" . }}
      key: password
{{- end }}
{{- if or .Values.database.readUrl .Values.database.readUrlSecret.name $cnpg }}
# Gets and Lists of requests, within the consistency token and the lag bound (the
# operator's generated passwords are alphanumeric: safe in a URL).
- name: DATABASE_READ_URL
  {{- if .Values.database.readUrlSecret.name }}
  # Like the main URL, from a Secret: a URL holds a password, which a plain value would
  # show to anyone who may read the Deployment.
  valueFrom:
    secretKeyRef:
      name: {{ .Values.database.readUrlSecret.name }}
      key: {{ .Values.database.readUrlSecret.key }}
  {{- else }}
  value: {{ .Values.database.readUrl | default (printf "postgresql://$(ARBOR_DB_USER):$(ARBOR_DB_PASSWORD)@%s-db-ro:5432/arbor" (include "arbor.fullname" .)) }}
  {{- end }}
- name: ARBOR_READ_REPLICA_MAX_LAG_MS
  value: {{ .Values.database.readReplicaMaxLagMs | quote }}
{{- end }}
{{- if .Values.signingKeys.existingSecret }}
- name: ARBOR_SIGNING_KEYS_DIR
  value: /etc/arbor/signing-keys
{{- end }}
{{- if .Values.secretKey.existingSecret }}
- name: ARBOR_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secretKey.existingSecret }}
      key: {{ .Values.secretKey.key }}
{{- end }}
{{- end -}}

{{/*
Where a pod may run and how it pulls its image: nodeSelector, tolerations, affinity and
imagePullSecrets from the values, each only when set (every Deployment and the Job).
*/}}
{{- define "arbor.scheduling" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
