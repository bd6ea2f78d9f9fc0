#!/usr/bin/env python3
"""make-scenarios.py: writes the three field-report scenarios (../../../
shared seeds: HAProxy stale config mount, payments-api hook ConfigMap race,
rke2 helm-install on a superseded release) as the inputs a cluster would
really give: kubectl event streams (watch JSON, NDJSON envelopes, List),
CRI / Fluent Bit container logs named like /var/log/containers, helm history
and list tables, and Helm release storage Secrets with their gzip+base64
payload.

Usage: make-scenarios.py OUTDIR   (tests/data/scenarios and examples/ are
both produced with it; the output is deterministic).
"""
import base64
import gzip
import hashlib
import json
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)


def cid(seed):
    return hashlib.sha256(seed.encode()).hexdigest()


def uid(seed):
    h = hashlib.md5(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def write(path, text):
    full = os.path.join(OUT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


def event(ns, kind, name, reason, msg, first, last, count, etype="Warning",
          component="kubelet", host="node-1", field=None, seq=0):
    ev = {
        "apiVersion": "v1",
        "count": count,
        "eventTime": None,
        "firstTimestamp": first,
        "involvedObject": {"apiVersion": "v1", "kind": kind, "name": name,
                           "namespace": ns,
                           "uid": uid(ns + name)},
        "kind": "Event",
        "lastTimestamp": last,
        "message": msg,
        "metadata": {"creationTimestamp": first,
                     "name": f"{name}.{hashlib.md5((name + reason + str(seq)).encode()).hexdigest()[:16]}",
                     "namespace": ns,
                     "resourceVersion": str(100000 + seq),
                     "uid": uid(name + reason + str(seq))},
        "reason": reason,
        "reportingComponent": component,
        "reportingInstance": host,
        "source": {"component": component, "host": host},
        "type": etype,
    }
    if field:
        ev["involvedObject"]["fieldPath"] = field
    return ev


def resend(ev, last, count):
    """The same Event object patched in place (a MODIFIED watch event)."""
    e = json.loads(json.dumps(ev))
    e["lastTimestamp"] = last
    e["count"] = count
    e["metadata"]["resourceVersion"] = str(int(e["metadata"]["resourceVersion"]) + 7)
    return e


def pretty_stream(evs):
    """kubectl get events -w -o json: pretty objects, concatenated."""
    return "".join(json.dumps(e, indent=4, sort_keys=True) + "\n" for e in evs)


def cri(lines):
    return "".join(f"{ts} {stream} F {msg}\n" for ts, stream, msg in lines)


def release_secret(name, ns, rev, status, desc, last_deployed, chart, appver,
                   modified, manifest="", hooks=None):
    rel = {
        "name": name,
        "info": {"first_deployed": "2024-01-10T09:00:00.000000000+00:00",
                 "last_deployed": last_deployed, "deleted": "",
                 "description": desc, "status": status,
                 "notes": ""},
        "chart": {"metadata": {"name": chart.rsplit("-", 1)[0],
                               "version": chart.rsplit("-", 1)[1],
                               "appVersion": appver, "apiVersion": "v2"}},
        "config": {},
        "manifest": manifest,
        "hooks": hooks or [],
        "version": rev,
        "namespace": ns,
    }
    raw = json.dumps(rel, separators=(",", ":")).encode()
    helm = base64.b64encode(gzip.compress(raw, 9, mtime=0))
    data = base64.b64encode(helm).decode()
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "data": {"release": data},
        "metadata": {
            "name": f"sh.helm.release.v1.{name}.v{rev}", "namespace": ns,
            "creationTimestamp": last_deployed[:19] + "Z",
            "labels": {"modifiedAt": str(modified), "name": name,
                       "owner": "helm", "status": status,
                       "version": str(rev)},
            "resourceVersion": str(5000 + rev), "uid": uid(name + str(rev)),
        },
    }


def deployment(name, checksum):
    ann = ("      annotations:\n        checksum/config: 3f2a9c\n"
           if checksum else "")
    return (f"---\n# Source: {name}/templates/deployment.yaml\n"
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n"
            f"  labels:\n    app.kubernetes.io/instance: {name}\nspec:\n"
            f"  replicas: 3\n  template:\n    metadata:\n{ann}"
            f"      labels:\n        app.kubernetes.io/instance: {name}\n"
            f"    spec:\n      containers:\n      - name: app\n")


# ---- 1. stale config mount: haproxy-ingress upgraded, config gone -------
def stale_config_mount(d):
    ns, rel = "ingress", "haproxy-ingress"
    pods = ["haproxy-ingress-5f4d7c9b6-xq2lz", "haproxy-ingress-5f4d7c9b6-p7k4n"]
    manifest = (deployment(rel, checksum=False) +
                "---\n# Source: haproxy-ingress/templates/configmap.yaml\n"
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                "  name: haproxy-config-v2\n")
    secrets = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
               "items": [
                   release_secret(rel, ns, 3, "superseded", "Upgrade complete",
                                  "2024-08-20T09:12:44.183021455+00:00",
                                  "haproxy-ingress-0.14.5", "2.6.0", 1724145164,
                                  deployment(rel, checksum=False)),
                   release_secret(rel, ns, 4, "deployed", "Upgrade complete",
                                  "2024-09-05T12:00:00.517733201+00:00",
                                  "haproxy-ingress-0.14.6", "2.6.0", 1725537600,
                                  manifest)]}
    write(f"{d}/release-secrets.json", json.dumps(secrets, indent=4) + "\n")
    evs = [
        event(ns, "Deployment", rel, "ScalingReplicaSet",
              "Scaled up replica set haproxy-ingress-5f4d7c9b6 to 2",
              "2024-09-05T12:00:04Z", "2024-09-05T12:00:04Z", 1, "Normal",
              "deployment-controller", "", seq=1),
        event(ns, "Pod", pods[0], "Scheduled",
              f"Successfully assigned ingress/{pods[0]} to node-1",
              "2024-09-05T12:00:05Z", "2024-09-05T12:00:05Z", 1, "Normal",
              "default-scheduler", "", seq=2),
    ]
    fm = [event(ns, "Pod", p, "FailedMount",
                'MountVolume.SetUp failed for volume "haproxy-config" : '
                'configmap "haproxy-config" not found',
                "2024-09-05T12:00:21Z", "2024-09-05T12:00:21Z", 1,
                host=f"node-{i + 1}", seq=10 + i) for i, p in enumerate(pods)]
    evs += fm
    evs.append(event(ns, "Pod", pods[0], "BackOff",
                     f"Back-off restarting failed container haproxy in pod "
                     f"{pods[0]}_ingress(7f1c2d9e-0b1a-4c55-9d1e-3f5a7b9c1d2e)",
                     "2024-09-05T12:02:10Z", "2024-09-05T12:02:10Z", 1,
                     field="spec.containers{haproxy}", seq=20))
    # watch re-sends: the same events, counts going up
    evs += [resend(fm[0], "2024-09-05T12:06:30Z", 8),
            resend(fm[1], "2024-09-05T12:05:10Z", 6),
            resend(evs[4], "2024-09-05T12:08:00Z", 25)]
    evs.append(event(ns, "Pod", pods[1], "Unhealthy",
                     "Readiness probe failed: HTTP probe failed with statuscode: 503",
                     "2024-09-05T12:03:02Z", "2024-09-05T12:07:32Z", 19,
                     field="spec.containers{haproxy}", host="node-2", seq=30))
    write(f"{d}/events-watch.json", pretty_stream(evs))
    logs = {
        pods[0]: [
            ("2024-09-05T12:01:02.118402311Z", "stderr",
             "[NOTICE]   (1) : haproxy version is 2.6.0-1ubuntu1"),
            ("2024-09-05T12:01:02.120031554Z", "stderr",
             "Error opening configuration file /etc/haproxy/haproxy.cfg: No such file or directory"),
            ("2024-09-05T12:03:40.503225160Z", "stderr",
             "cannot open /etc/haproxy/haproxy.cfg: permission denied"),
            ("2024-09-05T12:03:40.503930018Z", "stderr",
             "failed to reload haproxy: configuration file is not readable"),
        ],
        pods[1]: [
            ("2024-09-05T12:02:15.002113Z", "stderr",
             "[ALERT]    (1) : Error opening configuration file /etc/haproxy/haproxy.cfg: No such file or directory"),
            ("2024-09-05T12:04:01.77Z", "stdout",
             "10.42.1.17:50412 [05/Sep/2024:12:04:01.771] http-in http-in/<NOSRV> "
             "-1/-1/-1/-1/0 503 217 - - SC-- 1/1/0/0/0 0/0 \"POST /v1/predict HTTP/1.1\""),
            ("2024-09-05T12:04:01.78Z", "stdout",
             "<html><body><h1>503 Service Unavailable</h1> No server is available to handle this request. </body></html>"),
        ],
    }
    for p, lines in logs.items():
        write(f"{d}/{p}_{ns}_haproxy-{cid(p)}.log", cri(lines))


# ---- 2. hook ConfigMap race: payments-api 48 failed, rollback to 47 -------
def hook_configmap_race(d):
    ns, rel = "prod", "payments-api"
    broken = ["payments-api-7d9c8f4b6-4kx2m", "payments-api-7d9c8f4b6-9jvpd",
              "payments-api-7d9c8f4b6-nq7wr"]
    healthy = ["payments-api-7d9c8f4b6-x8r2t", "payments-api-7d9c8f4b6-m5wq7"]
    write(f"{d}/helm-history.txt",
          "$ helm history payments-api -n prod\n"
          "REVISION UPDATED STATUS CHART APP VERSION DESCRIPTION\n"
          "47 2024-11-03 14:22:11 UTC superseded payments-api-3.4.1 3.4.1 Upgrade complete\n"
          "48 2024-11-03 14:41:07 UTC failed payments-api-3.5.0 3.5.0 Upgrade \"payments-api\" failed\n"
          "49 2024-11-03 14:43:52 UTC deployed payments-api-3.4.1 3.4.1 Rollback to 47\n")
    hook_manifest = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                     "  name: payments-api-config\n  annotations:\n"
                     "    helm.sh/hook: pre-install,pre-upgrade\n"
                     "    helm.sh/hook-delete-policy: before-hook-creation\n"
                     "data:\n  DATABASE_URL: \"postgres://app:REDACTED@pg-primary.prod.svc:5432/payments\"\n")
    hooks = [{"name": "payments-api-config", "kind": "ConfigMap",
              "path": "payments-api/templates/configmap.yaml",
              "manifest": hook_manifest, "events": ["pre-install", "pre-upgrade"],
              "last_run": {"started_at": "2024-11-03T14:41:07.611Z",
                           "completed_at": "2024-11-03T14:41:08.402Z",
                           "phase": "Succeeded"},
              "weight": 0, "delete_policies": ["before-hook-creation"]}]
    sec = release_secret(rel, ns, 48, "failed", 'Upgrade "payments-api" failed: '
                         'context deadline exceeded',
                         "2024-11-03T14:41:07.512874193+00:00",
                         "payments-api-3.5.0", "3.5.0", 1730645167,
                         deployment(rel, checksum=False), hooks)
    write(f"{d}/release-secret-v48.json", json.dumps(sec, indent=4) + "\n")
    lines = []
    seq = 40
    for i, p in enumerate(broken):
        t0 = f"2024-11-03T14:41:{12 + 9 * i:02d}Z"
        cfg = event(ns, "Pod", p, "Failed",
                    'Error: configmap "payments-api-config" not found',
                    t0, t0, 1, field="spec.containers{api}", host=f"node-{i + 1}",
                    seq=seq)
        seq += 1
        lines.append({"type": "ADDED", "object": cfg})
        lines.append({"type": "MODIFIED", "object": resend(cfg, t0, 2)})
        bo = event(ns, "Pod", p, "BackOff",
                   f"Back-off restarting failed container api in pod {p}_prod(c0ffee{i})",
                   f"2024-11-03T14:42:{20 + 5 * i:02d}Z",
                   f"2024-11-03T14:42:{20 + 5 * i:02d}Z", 1,
                   field="spec.containers{api}", host=f"node-{i + 1}", seq=seq)
        seq += 1
        lines.append({"type": "ADDED", "object": bo})
        lines.append({"type": "MODIFIED", "object":
                      resend(bo, f"2024-11-03T14:5{3 + i}:0{i}Z", 14 + i)})
    lines.append({"type": "ADDED", "object": event(
        ns, "Pod", healthy[0], "Pulled",
        'Container image "registry.example.com/payments-api:3.4.1" already present on machine',
        "2024-11-03T14:44:01Z", "2024-11-03T14:44:01Z", 1, "Normal", seq=seq)})
    write(f"{d}/events.ndjson",
          "".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))
    recs = []
    for i, p in enumerate(broken):
        for k in range(3):
            recs.append(("2024-11-03T14:%02d:%02d.%06dZ" % (42 + 3 * k + i, 7 + 11 * i, 120034 + k),
                         p, "stderr",
                         'FATAL:  password authentication failed for user "app"'))
    for i, p in enumerate(healthy):
        for k in range(3):
            recs.append(("2024-11-03T14:%02d:%02d.%06dZ" % (42 + 4 * k, 30 + i, 5021 + k),
                         p, "stdout",
                         '{"level":"info","msg":"payment authorised","order":"A-%d"}' % (1000 + 10 * i + k)))
    recs.sort()
    out = []
    for ts, p, stream, msg in recs:
        out.append(json.dumps({
            "time": ts, "stream": stream, "_p": "F", "log": msg,
            "kubernetes": {"pod_name": p, "namespace_name": ns,
                           "pod_id": uid(p),
                           "labels": {"app.kubernetes.io/instance": rel,
                                      "app.kubernetes.io/name": rel,
                                      "pod-template-hash": "7d9c8f4b6"},
                           "annotations": {}, "host": "node-1",
                           "container_name": "api", "docker_id": cid(p),
                           "container_image": "registry.example.com/payments-api:3.4.1"}},
            separators=(",", ":")))
    write(f"{d}/fluentbit.ndjson", "\n".join(out) + "\n")


# ---- 3. helm-install on a superseded release: rke2-ingress-nginx ---------
def superseded_release_install(d):
    ns, rel = "kube-system", "rke2-ingress-nginx"
    pods = ["helm-install-rke2-ingress-nginx-k8v2x",
            "helm-install-rke2-ingress-nginx-tq4zm"]
    write(f"{d}/helm-ls.txt",
          "NAME                    NAMESPACE       REVISION        UPDATED                                 STATUS          CHART                           APP VERSION\n"
          "rke2-ingress-nginx      kube-system     2               2023-10-27 14:30:00.123456789 +0000 UTC superseded      ingress-nginx-4.5.2             1.9.0\n")
    script = [
        "+ [[ helm_v3 == \\h\\e\\l\\m\\_\\v\\2 ]]",
        "+ shopt -s nullglob",
        "+ helm_content_decode",
        "+ set -e",
        "+ ENC_CHART_PATH=/chart/rke2-ingress-nginx.tgz.base64",
        "+ helm_v3 repo update --fail-on-repo-update-fail",
        "++ helm_v3 ls --all -f '^rke2-ingress-nginx$' --namespace kube-system --output json",
        "++ jq -r '\"\\(.[0].chart),\\(.[0].status)\"'",
        "++ tr '[:upper:]' '[:lower:]'",
        "+ LINE=null,null",
        "+ IFS=,",
        "+ read -r INSTALLED_VERSION STATUS _",
        "+ VALUES=",
        "+ for VALUES_FILE in /config/*.yaml",
        "+ VALUES=' --values /config/values-01_HelmChart.yaml'",
        "+ '[' install = delete ']'",
        "+ '[' -z null ']'",
        "+ echo 'Installing helm_v3 chart'",
        "+ helm_v3 install --set-string global.clusterCIDR=10.42.0.0/16 rke2-ingress-nginx /tmp/rke2-ingress-nginx.tgz --values /config/values-01_HelmChart.yaml --values /config/values-10_HelmChartConfig.yaml",
        "Error: INSTALLATION FAILED: cannot re-use a name that is still in use",
    ]
    for i, p in enumerate(pods):
        base = 9 + 6 * i
        lines = [("2024-02-08T10:%02d:%02d.%09dZ" % (base, 3, 100000000 + k * 1713), "stderr", l)
                 for k, l in enumerate(script)]
        write(f"{d}/{p}_{ns}_helm-{cid(p)}.log", cri(lines))
    items = [
        event(ns, "HelmChart", rel, "ApplyJob",
              "Applying HelmChart using Job kube-system/helm-install-rke2-ingress-nginx",
              "2024-02-08T10:08:57Z", "2024-02-08T10:08:57Z", 1, "Normal",
              "helm-controller", "", seq=60),
        event(ns, "Pod", pods[0], "BackOff",
              f"Back-off restarting failed container helm in pod {pods[0]}_kube-system(5d1e9a77-2f0c-4b8e-a1d3-6c2b8e4f9a10)",
              "2024-02-08T10:09:40Z", "2024-02-08T10:14:41Z", 11,
              field="spec.containers{helm}", host="server-0", seq=61),
        event(ns, "Job", "helm-install-rke2-ingress-nginx", "BackoffLimitExceeded",
              "Job has reached the specified backoff limit", "2024-02-08T10:14:50Z",
              "2024-02-08T10:14:50Z", 1, component="job-controller", host="",
              seq=62),
        event(ns, "Pod", pods[1], "BackOff",
              f"Back-off restarting failed container helm in pod {pods[1]}_kube-system(9a3c2f10-7d4e-4b61-8e2a-0c5d9b7f1e33)",
              "2024-02-08T10:15:44Z", "2024-02-08T10:19:02Z", 7,
              field="spec.containers{helm}", host="server-0", seq=63),
    ]
    doc = {"apiVersion": "v1", "items": items, "kind": "List",
           "metadata": {"resourceVersion": ""}}
    write(f"{d}/events-list.json", json.dumps(doc, indent=4, sort_keys=True) + "\n")


stale_config_mount("stale-config-mount")
hook_configmap_race("hook-configmap-race")
superseded_release_install("superseded-release-install")
