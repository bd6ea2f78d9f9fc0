#!/usr/bin/env python3
"""make-variants.py: field-report scenarios in other formats and releases.

The three seeds (../scenarios/make-scenarios.py) are composed once each in
one set of formats. These are the same failure modes, and the corner cases
around them, in the inputs the first set does not use: kubernetes-event-
exporter JSON, Vector and Fluent Bit records, CRI-O logs under
/var/log/pods, docker json-file logs, events.k8s.io/v1 series events, raw
API watch lines, `helm history/list/status -o json`, Helm release storage
ConfigMaps (HELM_DRIVER=configmap) and Secrets, Helm 4 JSON, helm times
with a +02:00 offset. Each directory is one scenario; tests/e2e/t27xx-
t29xx assert what revtrail must make of it.

Usage: make-variants.py [OUTDIR]   (default: this directory; deterministic)
"""
import base64
import gzip
import hashlib
import json
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


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


def compact(o):
    return json.dumps(o, separators=(",", ":"))


def ndjson(objs):
    return "".join(compact(o) + "\n" for o in objs)


def event(ns, kind, name, reason, msg, first, last, count, etype="Warning",
          component="kubelet", host="node-1", field=None, seq=0):
    """A core/v1 Event as the legacy recorder writes it."""
    ev = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{name}.{hashlib.md5((name + reason + str(seq)).encode()).hexdigest()[:16]}",
                     "namespace": ns, "uid": uid(ns + name + reason + str(seq)),
                     "resourceVersion": str(200000 + seq),
                     "creationTimestamp": first},
        "involvedObject": {"kind": kind, "namespace": ns, "name": name,
                           "uid": uid(ns + kind + name), "apiVersion": "v1"},
        "reason": reason, "message": msg,
        "source": {"component": component, "host": host},
        "firstTimestamp": first, "lastTimestamp": last, "count": count,
        "type": etype, "eventTime": None,
        "reportingComponent": component, "reportingInstance": host,
    }
    if field:
        ev["involvedObject"]["fieldPath"] = field
    return ev


def exporter(ev, labels=None, owner=None, cluster="prod-eu"):
    """kubernetes-event-exporter: managedFields gone, involvedObject
    extended with labels/annotations/ownerReferences, clusterName added."""
    e = json.loads(json.dumps(ev))
    e["clusterName"] = cluster
    io = e["involvedObject"]
    if labels:
        io["labels"] = labels
    if owner:
        io["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0],
                                  "name": owner[1], "uid": uid(owner[1]),
                                  "controller": True,
                                  "blockOwnerDeletion": True}]
    io["deleted"] = False
    return e


def series_event(ns, kind, name, reason, note, event_time, last_observed,
                 count, controller="kubelet", instance="node-1", seq=0,
                 etype="Warning"):
    """An events.k8s.io/v1 Event (new recorder): eventTime, series, no
    legacy timestamps."""
    ev = {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": f"{name}.{hashlib.md5((name + reason + str(seq)).encode()).hexdigest()[:16]}",
                     "namespace": ns, "uid": uid(ns + name + reason + str(seq)),
                     "resourceVersion": str(300000 + seq),
                     "creationTimestamp": event_time[:19] + "Z"},
        "eventTime": event_time,
        "reportingController": controller, "reportingInstance": instance,
        "action": "Syncing", "reason": reason,
        "regarding": {"kind": kind, "namespace": ns, "name": name,
                      "uid": uid(ns + kind + name), "apiVersion": "v1"},
        "note": note, "type": etype,
    }
    if count > 1:
        ev["series"] = {"count": count, "lastObservedTime": last_observed}
    return ev


def cri(lines):
    return "".join(f"{ts} {stream} F {msg}\n" for ts, stream, msg in lines)


def docker(lines):
    return "".join(compact({"log": msg + "\n", "stream": stream, "time": ts}) + "\n"
                   for ts, stream, msg in lines)


def release(name, ns, rev, status, desc, last_deployed, chart, appver,
            manifest="", hooks=None, helm4=False):
    chart_name, chart_ver = chart.rsplit("-", 1)
    rel = {
        "name": name,
        "info": {"first_deployed": "2024-01-10T11:00:00.000000000+02:00",
                 "last_deployed": last_deployed, "description": desc,
                 "status": status, "notes": ""},
        "chart": {"metadata": {"name": chart_name, "version": chart_ver,
                               "appVersion": appver, "apiVersion": "v2"}},
        "config": {}, "manifest": manifest, "hooks": hooks or [],
        "version": rev, "namespace": ns,
    }
    if helm4:
        rel["apply_method"] = "ssa"
    else:
        rel["info"]["deleted"] = ""
    return rel


def payload(rel):
    return base64.b64encode(gzip.compress(compact(rel).encode(), 9, mtime=0)).decode()


def storage(rel, kind, modified, created=None):
    """A release storage object: Secret (double base64) or ConfigMap."""
    name, rev = rel["name"], rel["version"]
    data = payload(rel)
    labels = {"name": name, "owner": "helm", "status": rel["info"]["status"],
              "version": str(rev)}
    if modified:
        labels["modifiedAt"] = str(modified)
    if created:
        labels["createdAt"] = str(created)
    obj = {"apiVersion": "v1", "kind": kind,
           "metadata": {"name": f"sh.helm.release.v1.{name}.v{rev}",
                        "namespace": rel["namespace"], "labels": labels,
                        "resourceVersion": str(7000 + rev),
                        "uid": uid(name + kind + str(rev)),
                        "creationTimestamp": "2024-01-10T09:00:00Z"}}
    if kind == "Secret":
        obj["type"] = "helm.sh/release.v1"
        obj["data"] = {"release": base64.b64encode(data.encode()).decode()}
    else:
        obj["data"] = {"release": data}
    return obj


def k8s_list(items):
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List",
                       "metadata": {"resourceVersion": ""}}, indent=4) + "\n"


def hook(name, kind="ConfigMap", events=("pre-install", "pre-upgrade")):
    man = (f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n"
           "  annotations:\n"
           f"    helm.sh/hook: {','.join(events)}\n"
           "    helm.sh/hook-delete-policy: before-hook-creation\n")
    return {"name": name, "kind": kind, "path": f"templates/{name}.yaml",
            "manifest": man, "events": list(events),
            "last_run": {"started_at": "", "completed_at": "", "phase": "Succeeded"},
            "weight": -5, "delete_policies": ["before-hook-creation"]}


def deployment(name, instance, checksum):
    ann = ("      annotations:\n        checksum/config: 9c1e7d\n"
           if checksum else "")
    return (f"---\n# Source: chart/templates/deployment.yaml\n"
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n"
            f"spec:\n  template:\n    metadata:\n{ann}"
            f"      labels:\n        app.kubernetes.io/instance: {instance}\n"
            f"    spec:\n      containers:\n      - name: app\n")


# ---- edge: stale mount of a Secret, release "edge", Deployment "haproxy" --
def edge_secret_mount(d):
    """Release `edge` in namespace lb deploys Deployment `haproxy`: pod names
    carry no release prefix. The exporter's pod labels name the release;
    CRI-O logs under /var/log/pods only name the pod. History is `helm
    history -o json` (no release name: --release lb/edge) with +02:00 times.
    Revision 2 upgraded cleanly; revision 3 renamed the TLS Secret and
    mounts the config with a broken subPath."""
    ns, rel = "lb", "edge"
    broken = ["haproxy-6c8d9f7b5-w9xqz", "haproxy-6c8d9f7b5-r2mtk"]
    healthy = "haproxy-74d9c6b8f-bq4nl"
    write(f"{d}/history.json", compact([
        {"revision": 1, "updated": "2024-06-10T11:00:00.5+02:00", "status": "superseded",
         "chart": "haproxy-1.30.0", "app_version": "2.9.6", "description": "Install complete"},
        {"revision": 2, "updated": "2024-06-11T10:00:00.25+02:00", "status": "superseded",
         "chart": "haproxy-1.30.1", "app_version": "2.9.6", "description": "Upgrade complete"},
        {"revision": 3, "updated": "2024-06-12T16:30:05.123456789+02:00", "status": "deployed",
         "chart": "haproxy-1.31.0", "app_version": "2.9.7", "description": "Upgrade complete"},
    ]) + "\n")
    labels = lambda h: {"app.kubernetes.io/instance": rel,
                        "app.kubernetes.io/name": "haproxy",
                        "pod-template-hash": h}
    evs = []
    # revision 2 rolled out cleanly: Normal events only
    evs.append(exporter(event(ns, "Pod", healthy, "Scheduled",
                              f"Successfully assigned {ns}/{healthy} to node-2",
                              "2024-06-11T08:00:03Z", "2024-06-11T08:00:03Z", 1,
                              "Normal", "default-scheduler", "", seq=1),
                        labels("74d9c6b8f"), ("ReplicaSet", "haproxy-74d9c6b8f")))
    evs.append(exporter(event(ns, "Pod", healthy, "Started", "Started container haproxy",
                              "2024-06-11T08:00:09Z", "2024-06-11T08:00:09Z", 1,
                              "Normal", seq=2),
                        labels("74d9c6b8f"), ("ReplicaSet", "haproxy-74d9c6b8f")))
    evs.append(exporter(event(ns, "Deployment", "haproxy", "ScalingReplicaSet",
                              "Scaled up replica set haproxy-6c8d9f7b5 to 2",
                              "2024-06-12T14:30:07Z", "2024-06-12T14:30:07Z", 1,
                              "Normal", "deployment-controller", "", seq=3),
                        {"app.kubernetes.io/instance": rel}))
    for i, p in enumerate(broken):
        lab, own = labels("6c8d9f7b5"), ("ReplicaSet", "haproxy-6c8d9f7b5")
        evs.append(exporter(event(ns, "Pod", p, "Scheduled",
                                  f"Successfully assigned {ns}/{p} to node-{i + 1}",
                                  "2024-06-12T14:30:08Z", "2024-06-12T14:30:08Z", 1,
                                  "Normal", "default-scheduler", "", seq=10 + i), lab, own))
        evs.append(exporter(event(ns, "Pod", p, "FailedMount",
                                  'MountVolume.SetUp failed for volume "tls" : '
                                  'secret "edge-haproxy-tls" not found',
                                  "2024-06-12T14:30:%02dZ" % (9 + i),
                                  "2024-06-12T14:30:%02dZ" % (9 + i), 1,
                                  host=f"node-{i + 1}", seq=20 + i), lab, own))
    evs.append(exporter(event(ns, "Pod", broken[1], "Failed",
                              'Error: failed to start container "haproxy": Error response from '
                              'daemon: failed to create shim task: OCI runtime create failed: '
                              'runc create failed: unable to start container process: error during '
                              'container init: error mounting "/var/lib/kubelet/pods/'
                              f'{uid(broken[1])}/volume-subpaths/config/haproxy/0" to rootfs at '
                              '"/usr/local/etc/haproxy/haproxy.cfg": mount /var/lib/kubelet/pods/'
                              f'{uid(broken[1])}/volume-subpaths/config/haproxy/0:/usr/local/etc/'
                              'haproxy/haproxy.cfg (via /proc/self/fd/6), flags: 0x5000: not a '
                              'directory: unknown: Are you trying to mount a directory onto a file '
                              '(or vice-versa)? Check if the specified host path exists and is the '
                              'expected type',
                              "2024-06-12T14:31:40Z", "2024-06-12T14:31:40Z", 1,
                              host="node-2", field="spec.containers{haproxy}", seq=30),
                        labels("6c8d9f7b5"), ("ReplicaSet", "haproxy-6c8d9f7b5")))
    for i, p in enumerate(broken):
        evs.append(exporter(event(ns, "Pod", p, "BackOff",
                                  f"Back-off restarting failed container haproxy in pod "
                                  f"{p}_{ns}({uid(p)})",
                                  "2024-06-12T14:32:%02dZ" % (10 + 7 * i),
                                  "2024-06-12T14:32:%02dZ" % (10 + 7 * i), 1,
                                  host=f"node-{i + 1}", field="spec.containers{haproxy}",
                                  seq=40 + i),
                            labels("6c8d9f7b5"), ("ReplicaSet", "haproxy-6c8d9f7b5")))
    write(f"{d}/exporter.ndjson", ndjson(evs))
    # CRI-O: 9 fraction digits and +00:00, under /var/log/pods
    logs = {
        broken[0]: [
            ("2024-06-12T14:31:02.118402311+00:00", "stderr",
             "[NOTICE]   (1) : haproxy version is 2.9.7-5742051"),
            ("2024-06-12T14:31:02.120031554+00:00", "stderr",
             "[ALERT]    (1) : config : Cannot open configuration file/directory "
             "/usr/local/etc/haproxy/haproxy.cfg : Permission denied"),
            ("2024-06-12T14:33:40.503225160+00:00", "stderr",
             "[ALERT]    (1) : config : Cannot open configuration file/directory "
             "/usr/local/etc/haproxy/haproxy.cfg : Permission denied"),
        ],
        healthy: [
            ("2024-06-12T14:31:05.000000001+00:00", "stderr",
             "[NOTICE]   (1) : Loading success."),
            ("2024-06-12T14:31:09.000000001+00:00", "stdout",
             "10.0.3.7:40112 [12/Jun/2024:14:31:09.120] fe be/srv1 0/0/1/2/3 200 512 - - ---- 1/1/0/0/0 0/0 \"GET /healthz HTTP/1.1\""),
        ],
    }
    for p, lines in logs.items():
        write(f"{d}/var/log/pods/{ns}_{p}_{uid(p)}/haproxy/0.log", cri(lines))



def vector(ts, ns, pod, container, stream, msg, labels, owner):
    """Vector kubernetes_logs record (JSON codec)."""
    return {"file": f"/var/log/pods/{ns}_{pod}_{uid(pod)}/{container}/0.log",
            "kubernetes": {"container_id": "containerd://" + cid(pod),
                           "container_image": "registry.example.com/checkout:2.4.0",
                           "container_name": container,
                           "pod_ip": "10.42.3.17", "pod_labels": labels,
                           "pod_name": pod, "pod_namespace": ns,
                           "pod_node_name": "node-3",
                           "pod_owner": "ReplicaSet/" + owner,
                           "pod_uid": uid(pod)},
            "message": msg, "source_type": "kubernetes_logs",
            "stream": stream, "timestamp": ts}


# ---- checkout: hook race, history arrives in a later run ------------------
def checkout_hook_race(d):
    """Release checkout (shop) upgrades to 12, whose pre-upgrade hook
    ConfigMap checkout-env (before-hook-creation) is deleted and recreated;
    the upgrade fails and 13 rolls back to 11. Two of four pods boot in the
    gap: one cannot start (configmap not found), one starts with empty
    credentials. Events from kubernetes-event-exporter, logs from Vector.
    Run 1 (events/) has no history; run 2 (history/) brings `helm history
    -o json` (--release shop/checkout) and the revision 12 Secret."""
    ns, rel, rs = "shop", "checkout", "checkout-web-5d8f7c6b9"
    pods = [f"{rs}-b7xkq", f"{rs}-h2mzp", f"{rs}-lq9vn", f"{rs}-t4wrc"]
    broken = [pods[0], pods[2]]
    lab = {"app.kubernetes.io/instance": rel, "app.kubernetes.io/name": "checkout-web",
           "pod-template-hash": "5d8f7c6b9"}
    own = ("ReplicaSet", rs)
    evs = [exporter(event(ns, "Pod", p, "Scheduled",
                          f"Successfully assigned {ns}/{p} to node-{k + 1}",
                          "2024-07-02T13:10:02Z", "2024-07-02T13:10:02Z", 1,
                          "Normal", "default-scheduler", "", seq=k), lab, own)
           for k, p in enumerate(pods)]
    evs.append(exporter(event(ns, "Pod", broken[0], "Failed",
                              'Error: configmap "checkout-env" not found',
                              "2024-07-02T13:10:03Z", "2024-07-02T13:10:03Z", 1,
                              field="spec.containers{web}", seq=10), lab, own))
    # the exporter sends new Event objects only: a later, separate one
    evs.append(exporter(event(ns, "Pod", broken[0], "Failed",
                              'Error: couldn\'t find key DATABASE_URL in ConfigMap shop/checkout-env',
                              "2024-07-02T13:10:31Z", "2024-07-02T13:10:31Z", 1,
                              field="spec.containers{web}", seq=11), lab, own))
    evs.append(exporter(event(ns, "Pod", broken[1], "BackOff",
                              f"Back-off restarting failed container web in pod {broken[1]}_{ns}({uid(broken[1])})",
                              "2024-07-02T13:11:20Z", "2024-07-02T13:11:20Z", 1,
                              field="spec.containers{web}", host="node-3", seq=12), lab, own))
    # after the rollback (13:14:30Z) the broken pods keep failing
    evs.append(exporter(event(ns, "Pod", broken[1], "BackOff",
                              f"Back-off restarting failed container web in pod {broken[1]}_{ns}({uid(broken[1])})",
                              "2024-07-02T13:21:40Z", "2024-07-02T13:21:40Z", 1,
                              field="spec.containers{web}", host="node-3", seq=13), lab, own))
    evs.append(exporter(event(ns, "Pod", pods[1], "Pulled",
                              'Container image "registry.example.com/checkout:2.4.0" already present on machine',
                              "2024-07-02T13:10:04Z", "2024-07-02T13:10:04Z", 1,
                              "Normal", seq=14), lab, own))
    write(f"{d}/events/exporter.ndjson", ndjson(evs))
    recs = []
    for k in range(3):
        recs.append(vector("2024-07-02T13:%02d:%02d.%03dZ" % (10 + 2 * k, 45, 120 + k), ns,
                           broken[1], "web", "stderr",
                           'psycopg2.OperationalError: connection to server at "pg.shop.svc" '
                           '(10.43.7.9), port 5432 failed: FATAL:  password authentication '
                           'failed for user "checkout"', lab, rs))
    for p in (pods[1], pods[3]):
        for k in range(3):
            recs.append(vector("2024-07-02T13:%02d:%02d.%03dZ" % (10 + 3 * k, 50, k), ns, p,
                               "web", "stdout",
                               '{"level":"info","msg":"order placed","order":"B-%d"}' % (7 * k),
                               lab, rs))
    recs.append(vector("2024-07-02T13:12:00.000Z", ns, pods[3], "web", "stdout",
                       "Readiness probe succeeded; pool ready (min=2 max=10)", lab, rs))
    recs.sort(key=lambda r: r["timestamp"])
    write(f"{d}/events/vector.ndjson", ndjson(recs))
    write(f"{d}/history/history.json", compact([
        {"revision": 11, "updated": "2024-07-01T11:00:00.75+02:00", "status": "superseded",
         "chart": "checkout-2.3.9", "app_version": "2.3.9", "description": "Upgrade complete"},
        {"revision": 12, "updated": "2024-07-02T15:10:00.5+02:00", "status": "failed",
         "chart": "checkout-2.4.0", "app_version": "2.4.0",
         "description": "Upgrade \"checkout\" failed: pre-upgrade hooks failed: timed out waiting for the condition"},
        {"revision": 13, "updated": "2024-07-02T15:14:30.25+02:00", "status": "deployed",
         "chart": "checkout-2.3.9", "app_version": "2.3.9", "description": "Rollback to 11"},
    ]) + "\n")
    r12 = release(rel, ns, 12, "failed",
                  "Upgrade \"checkout\" failed: pre-upgrade hooks failed: timed out waiting for the condition",
                  "2024-07-02T15:10:00.5+02:00", "checkout-2.4.0", "2.4.0",
                  deployment("checkout-web", rel, checksum=False),
                  [hook("checkout-env"), hook("checkout-migrate", "Job", ("pre-upgrade",))])
    write(f"{d}/history/release-v12.json",
          json.dumps(storage(r12, "Secret", 1719925800), indent=4) + "\n")


# ---- traefik on k3s: helm-install on a superseded release -----------------
K3S_SCRIPT = [
    "+ [[ helm_v3 == \\h\\e\\l\\m\\_\\v\\2 ]]",
    "+ shopt -s nullglob",
    "+ [[ -f /config/ca-file.pem ]]",
    "+ helm_content_decode",
    "+ set -e",
    "+ ENC_CHART_PATH=/chart/traefik.tgz.base64",
    "+ CHART_PATH=/tmp/traefik.tgz",
    "+ [[ ! -f /chart/traefik.tgz.base64 ]]",
    "+ return",
    "+ [[ install != \\d\\e\\l\\e\\t\\e ]]",
    "+ helm_repo_init",
    "+ grep -q -e 'https\\?://'",
    "++ helm_v3 ls --all -f '^traefik$' --namespace {tns} --output json",
    "++ jq -r '\"\\(.[0].app_version),\\(.[0].status)\"'",
    "++ tr '[:upper:]' '[:lower:]'",
    "+ LINE=null,null",
    "+ IFS=,",
    "+ read -r INSTALLED_VERSION STATUS _",
    "+ VALUES=",
    "+ for VALUES_FILE in /config/*.yaml",
    "+ VALUES=' --values /config/values-01_HelmChart.yaml'",
    "+ [[ install = \\d\\e\\l\\e\\t\\e ]]",
    "+ [[ null =~ ^(|null)$ ]]",
    "+ [[ null =~ ^(|null)$ ]]",
    "+ echo 'Installing helm_v3 chart'",
    "+ helm_v3 install --namespace {tns} --version 25.0.2+up25.0.0 --set-string global.systemDefaultRegistry= traefik https://10.43.0.1:443/static/charts/traefik-25.0.2+up25.0.0.tgz --values /config/values-01_HelmChart.yaml",
    "Error: INSTALLATION FAILED: cannot re-use a name that is still in use",
]


def traefik_superseded(d, tns):
    """k3s: HelmChart traefik in kube-system (targetNamespace tns). The
    latest release record is gone, `helm list` shows revision 3
    superseded, and the helm-install job runs `helm install`, fails on the
    existing name and crash-loops. Events as raw API watch lines
    (helm-controller JobFailed on the HelmChart, BackoffLimitExceeded on
    the Job, BackOff on its pods); job logs as docker json-file files under
    /var/log/containers; history as `helm list -A -a -o json`."""
    ns, rel, job = "kube-system", "traefik", "helm-install-traefik"
    pods = [f"{job}-x7fqb", f"{job}-9cwmt"]
    items = [
        event(ns, "HelmChart", rel, "ApplyJob",
              f"Applying HelmChart from {ns}/traefik using Job {ns}/{job}",
              "2024-03-05T07:59:58Z", "2024-03-05T07:59:58Z", 1, "Normal",
              "helm-controller", "", seq=60),
        event(ns, "Job", job, "SuccessfulCreate", f"Created pod: {pods[0]}",
              "2024-03-05T08:00:00Z", "2024-03-05T08:00:00Z", 1, "Normal",
              "job-controller", "", seq=61),
        event(ns, "Pod", pods[0], "BackOff",
              f"Back-off restarting failed container helm in pod {pods[0]}_{ns}({uid(pods[0])})",
              "2024-03-05T08:00:41Z", "2024-03-05T08:05:12Z", 9,
              field="spec.containers{helm}", host="k3s-server-1", seq=62),
        event(ns, "Job", job, "BackoffLimitExceeded",
              "Job has reached the specified backoff limit", "2024-03-05T08:05:40Z",
              "2024-03-05T08:05:40Z", 1, component="job-controller", host="", seq=63),
        event(ns, "HelmChart", rel, "JobFailed",
              f"Helm Install Job {ns}/{job} failed: BackoffLimitExceeded",
              "2024-03-05T08:05:41Z", "2024-03-05T08:05:41Z", 1,
              component="helm-controller", host="", seq=64),
        event(ns, "Pod", pods[1], "BackOff",
              f"Back-off restarting failed container helm in pod {pods[1]}_{ns}({uid(pods[1])})",
              "2024-03-05T08:06:30Z", "2024-03-05T08:09:02Z", 5,
              field="spec.containers{helm}", host="k3s-server-1", seq=65),
        # an unrelated Normal event on another release of the namespace
        event(ns, "Pod", "coredns-6799fbcd5-v8h6k", "Pulled",
              'Container image "rancher/mirrored-coredns-coredns:1.10.1" already present on machine',
              "2024-03-05T08:01:00Z", "2024-03-05T08:01:00Z", 1, "Normal", seq=66),
    ]
    write(f"{d}/events-watch.ndjson",
          ndjson({"type": "ADDED", "object": e} for e in items))
    # the same cluster's kubernetes-event-exporter: the job pod's labels
    # name the chart (helmcharts.helm.cattle.io/chart), not the namespace
    write(f"{d}/exporter.ndjson", ndjson([exporter(
        event(ns, "Pod", pods[1], "BackOff",
              f"Back-off restarting failed container helm in pod {pods[1]}_{ns}({uid(pods[1])})",
              "2024-03-05T08:07:15Z", "2024-03-05T08:07:15Z", 1,
              field="spec.containers{helm}", host="k3s-server-1", seq=70),
        {"helmcharts.helm.cattle.io/chart": rel, "batch.kubernetes.io/job-name": job,
         "batch.kubernetes.io/controller-uid": uid(job)},
        ("Job", job), cluster="k3s")]))
    script = [l.replace("{tns}", tns) for l in K3S_SCRIPT]
    for i, p in enumerate(pods):
        lines = [("2024-03-05T08:%02d:%02d.%dZ" % (i * 6, 10 + k, 5 + k), "stderr", l)
                 for k, l in enumerate(script)]
        write(f"{d}/var/log/containers/{p}_{ns}_helm-{cid(p)}.log", docker(lines))
    write(f"{d}/helm-list.json", compact([
        {"name": "traefik", "namespace": tns, "revision": "3",
         "updated": "2024-02-20 10:12:44.123456789 +0100 CET", "status": "superseded",
         "chart": "traefik-25.0.2+up25.0.0", "app_version": "v2.10.5"},
        {"name": "traefik-crd", "namespace": tns, "revision": "1",
         "updated": "2024-01-10 09:00:01.5 +0000 UTC", "status": "deployed",
         "chart": "traefik-crd-25.0.2+up25.0.0", "app_version": "v2.10.5"},
    ]) + "\n")


# ---- api and api-gateway: one namespace, overlapping release names --------
def prefix_siblings(d):
    """Releases api and api-gateway in namespace platform, both failing
    after an upgrade at about the same time. Pods carry no labels:
    longest-prefix attribution must keep them apart. Events are
    events.k8s.io/v1 objects (`kubectl get events.v1.events.k8s.io -o
    json`); history is Helm release storage ConfigMaps
    (HELM_DRIVER=configmap)."""
    ns = "platform"
    api = ["api-5c6d7f8b9-k2xwz", "api-5c6d7f8b9-p8rtn"]
    gw = ["api-gateway-7f9d8c6b5-m4hqd", "api-gateway-7f9d8c6b5-zz9xl"]
    rels = []
    for rev, st, t, desc in ((6, "superseded", "2024-04-09T08:00:00.1+02:00", "Upgrade complete"),
                             (7, "deployed", "2024-04-10T12:00:00.250+02:00", "Upgrade complete")):
        rels.append(storage(release("api", ns, rev, st, desc, t, "api-1.%d.0" % rev, "1.%d" % rev),
                            "ConfigMap", None, 1712743200 if rev == 7 else None))
    for rev, st, t, desc in ((3, "superseded", "2024-04-01T09:00:00+02:00", "Upgrade complete"),
                             (4, "deployed", "2024-04-10T12:02:00.5+02:00", "Upgrade complete")):
        rels.append(storage(release("api-gateway", ns, rev, st, desc, t,
                                    "api-gateway-0.%d.1" % rev, "0.%d" % rev),
                            "ConfigMap", 1712743320 if rev == 4 else 1711954800))
    write(f"{d}/release-configmaps.json", k8s_list(rels))
    items = []
    s = 0
    for i, p in enumerate(api):
        s += 1
        items.append(series_event(ns, "Pod", p, "BackOff",
                                  f"Back-off restarting failed container api in pod {p}_{ns}({uid(p)})",
                                  "2024-04-10T10:01:%02d.000000Z" % (5 + i),
                                  "2024-04-10T10:06:%02d.512000Z" % (5 + i), 12, seq=s))
    items.append(series_event(ns, "Pod", gw[0], "Failed",
                              'Failed to pull image "registry.example.com/api-gateway:0.4.1": '
                              'rpc error: code = NotFound desc = failed to pull and unpack image '
                              '"registry.example.com/api-gateway:0.4.1": not found',
                              "2024-04-10T10:02:10.000000Z", "2024-04-10T10:02:10.000000Z", 1, seq=20))
    items.append(series_event(ns, "Pod", gw[1], "Failed", "Error: ImagePullBackOff",
                              "2024-04-10T10:02:12.000000Z", "2024-04-10T10:04:40.000000Z", 6, seq=21))
    items.append(series_event(ns, "Pod", gw[0], "FailedMount",
                              'MountVolume.SetUp failed for volume "routes" : configmap '
                              '"api-gateway-routes" not found',
                              "2024-04-10T10:02:11.000000Z", "2024-04-10T10:02:11.000000Z", 1, seq=22))
    items.append(series_event(ns, "Pod", gw[1], "Scheduled",
                              f"Successfully assigned {ns}/{gw[1]} to node-2",
                              "2024-04-10T10:02:05.000000Z", "2024-04-10T10:02:05.000000Z", 1,
                              "default-scheduler", "default-scheduler-cp-1", seq=23, etype="Normal"))
    doc = {"apiVersion": "v1", "items": items, "kind": "List",
           "metadata": {"resourceVersion": ""}}
    write(f"{d}/events-v1.json", json.dumps(doc, indent=4) + "\n")
    logs = [(f"2024-04-10T10:01:0{k}.25Z", "stderr",
             "dial tcp 10.43.12.5:5432: connect: connection refused") for k in range(3)]
    write(f"{d}/var/log/containers/{api[0]}_{ns}_api-{cid(api[0])}.log", cri(logs))


# ---- worker: series events, gaps, UTC instants, a release with no history --
def gaps_and_series(d):
    """Release worker (jobs). Helm 4 history JSON with +02:00 times
    (--release jobs/worker). Two bursts of failures more than the gap
    apart: 08:00-08:06 under revision 5, 08:59:30-09:03 under revision 6
    (updated 10:58:00+02:00 = 08:58:00Z: read as local time it would
    still be revision 5), open across the rollback 7 at 09:01:30Z. Events are events.k8s.io/v1 with series only, or
    eventTime only. A second workload, report-cron, has no history at all:
    its incident keeps revision 0 and is attributed by workload name."""
    ns = "jobs"
    w = ["worker-6f7b8c9d4-q2wxe", "worker-6f7b8c9d4-v5kzn"]
    # Helm 4: a zero `updated` is omitted, rollbacks carry rollback_revision
    write(f"{d}/history.json", compact([
        {"revision": 4, "status": "superseded",
         "chart": "worker-3.0.0", "app_version": "3.0.0", "description": "Install complete"},
        {"revision": 5, "updated": "2024-05-02T09:55:00.5+02:00", "status": "superseded",
         "chart": "worker-3.1.0", "app_version": "3.1.0", "description": "Upgrade complete"},
        {"revision": 6, "updated": "2024-05-02T10:58:00.25+02:00", "status": "superseded",
         "chart": "worker-3.1.1", "app_version": "3.1.1", "description": "Upgrade complete"},
        {"revision": 7, "updated": "2024-05-02T11:01:30+02:00", "status": "deployed",
         "chart": "worker-3.1.0", "app_version": "3.1.0", "description": "Rollback to 5",
         "rollback_revision": 5},
    ]) + "\n")
    evs = [
        # burst 1: series events (no lastTimestamp)
        series_event(ns, "Pod", w[0], "BackOff",
                     f"Back-off restarting failed container worker in pod {w[0]}_{ns}({uid(w[0])})",
                     "2024-05-02T08:00:10.000000Z", "2024-05-02T08:05:50.250000Z", 9, seq=1),
        series_event(ns, "Pod", w[1], "Unhealthy",
                     "Liveness probe failed: Get \"http://10.42.0.9:8080/healthz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                     "2024-05-02T08:01:00.000000Z", "2024-05-02T08:06:00.000000Z", 7, seq=2),
        # burst 2: eventTime only
        series_event(ns, "Pod", w[1], "OOMKilling",
                     "Memory cgroup out of memory: Killed process 4242 (worker) total-vm:2097152kB, anon-rss:1048576kB",
                     "2024-05-02T08:59:30.000000Z", None, 1, "kernel-monitor", "node-4", seq=3),
        series_event(ns, "Pod", w[1], "BackOff",
                     f"Back-off restarting failed container worker in pod {w[1]}_{ns}({uid(w[1])})",
                     "2024-05-02T09:00:05.000000Z", "2024-05-02T09:03:00.000000Z", 4, seq=4),
        # no release history for this one
        series_event(ns, "Pod", "report-cron-28571460-b8xkw", "BackOff",
                     "Back-off restarting failed container report in pod report-cron-28571460-b8xkw_jobs(0f1e)",
                     "2024-05-02T08:30:00.000000Z", "2024-05-02T08:32:00.000000Z", 3, seq=5),
        # noise
        series_event(ns, "Pod", w[0], "Pulled", "Successfully pulled image \"registry.example.com/worker:3.1.1\" in 1.2s",
                     "2024-05-02T08:58:40.000000Z", None, 1, seq=6, etype="Normal"),
    ]
    write(f"{d}/events-watch.ndjson",
          ndjson({"type": "ADDED", "object": e} for e in evs))


# ---- shop/web: healthy upgrades, noise only --------------------------------
def quiet_release(d):
    """Release web (shop) upgraded twice, cleanly. Normal events, access
    logs and decoy lines that use the words of errors: no incident."""
    ns, rel = "shop", "web"
    pods = ["web-5b6c7d8e9-aa2bc", "web-5b6c7d8e9-dd3ef"]
    r = release(rel, ns, 3, "deployed", "Upgrade complete",
                "2024-08-01T10:00:00.5+02:00", "web-1.5.0", "1.5.0",
                deployment("web", rel, checksum=True))
    write(f"{d}/helm-status.json", json.dumps(r, indent=2) + "\n")
    write(f"{d}/history.txt",
          "REVISION\tUPDATED                 \tSTATUS    \tCHART    \tAPP VERSION\tDESCRIPTION     \n"
          "1       \tWed Jul 31 08:00:02 2024\tsuperseded\tweb-1.4.0\t1.4.0      \tInstall complete\n"
          "2       \tThu Aug  1 07:30:00 2024\tsuperseded\tweb-1.4.1\t1.4.1      \tUpgrade complete\n"
          "3       \tThu Aug  1 08:00:00 2024\tdeployed  \tweb-1.5.0\t1.5.0      \tUpgrade complete\n")
    lab = {"app.kubernetes.io/instance": rel, "pod-template-hash": "5b6c7d8e9"}
    evs = [exporter(event(ns, "Pod", p, reason, msg, t, t, 1, "Normal",
                          "kubelet", "node-1", seq=k), lab, ("ReplicaSet", "web-5b6c7d8e9"))
           for k, (p, reason, msg, t) in enumerate([
               (pods[0], "Pulled", 'Successfully pulled image "registry.example.com/web:1.5.0" in 812ms', "2024-08-01T08:00:05Z"),
               (pods[0], "Created", "Created container web", "2024-08-01T08:00:06Z"),
               (pods[0], "Started", "Started container web", "2024-08-01T08:00:06Z"),
               (pods[1], "Killing", "Stopping container web", "2024-08-01T08:00:20Z"),
           ])]
    write(f"{d}/exporter.ndjson", ndjson(evs))
    lines = [
        ("2024-08-01T08:00:07.1Z", "stdout", "configmap/web-config created"),
        ("2024-08-01T08:00:07.2Z", "stdout", "Release \"web\" has been upgraded. Happy Helming!"),
        ("2024-08-01T08:00:08.3Z", "stdout", "Readiness probe succeeded for container web"),
        ("2024-08-01T08:00:09.4Z", "stdout", "no error in configuration file /etc/web/config.yaml"),
        ("2024-08-01T08:00:10.5Z", "stdout", "10.0.0.1 - - [01/Aug/2024:08:00:10 +0000] \"GET /healthz HTTP/1.1\" 200 2 \"-\" \"kube-probe/1.29\""),
    ]
    write(f"{d}/var/log/containers/{pods[0]}_{ns}_web-{cid(pods[0])}.log", cri(lines))


# ---- vault: labels only on untagged Fluent Bit lines, a StatefulSet ------
def vault_fluentbit_labels(d):
    """Release `secrets` (namespace vault) runs StatefulSet `vault`. Revision
    2 renamed the TLS Secret: vault-1 cannot mount it, then cannot load its
    listener certificate. Events are `kubectl get events -w -o json` output
    with no labels; Fluent Bit records (classic cri parser: `message`,
    `logtag`) carry the pods' labels, but only the healthy pod's lines and
    vault-1's errors do, untagged lines teach the release as well as tagged
    ones. History: `helm status -o json` (no chart) and the release
    Secrets of 1 and 2 (`kubectl get secret -l owner=helm -o json`)."""
    ns, rel = "vault", "secrets"
    lab = {"app.kubernetes.io/instance": rel, "app.kubernetes.io/name": "vault",
           "controller-revision-hash": "vault-6d8f9c7b5", "statefulset.kubernetes.io/pod-name": ""}
    r1 = release(rel, ns, 1, "superseded", "Install complete",
                 "2024-09-01T10:00:00.5+02:00", "vault-0.28.0", "1.17.2")
    r2 = release(rel, ns, 2, "deployed", "Upgrade complete",
                 "2024-09-03T09:45:10.75+02:00", "vault-0.28.1", "1.17.3")
    write(f"{d}/release-secrets.json",
          k8s_list([storage(r1, "Secret", 1725177600), storage(r2, "Secret", None, 1725349510)]))
    st = json.loads(json.dumps(r2))
    del st["chart"]
    write(f"{d}/helm-status.json", json.dumps(st, indent=2) + "\n")
    evs = [
        event(ns, "StatefulSet", "vault", "SuccessfulCreate",
              "create Pod vault-1 in StatefulSet vault successful",
              "2024-09-03T07:45:30Z", "2024-09-03T07:45:30Z", 1, "Normal",
              "statefulset-controller", "", seq=1),
        event(ns, "Pod", "vault-1", "FailedMount",
              'MountVolume.SetUp failed for volume "userconfig-vault-tls" : secret "vault-tls" not found',
              "2024-09-03T07:45:31Z", "2024-09-03T07:47:35Z", 5, seq=2),
        event(ns, "Pod", "vault-1", "BackOff",
              "Back-off restarting failed container vault in pod vault-1_vault(0c1d)",
              "2024-09-03T07:48:10Z", "2024-09-03T07:52:40Z", 8,
              field="spec.containers{vault}", seq=3),
    ]
    write(f"{d}/events-watch.json",
          "".join(json.dumps(e, indent=4, sort_keys=True) + "\n" for e in evs))
    def fb(ts, pod, stream, msg):
        l = dict(lab)
        l["statefulset.kubernetes.io/pod-name"] = pod
        return {"time": ts, "stream": stream, "logtag": "F", "message": msg,
                "kubernetes": {"pod_name": pod, "namespace_name": ns, "pod_id": uid(pod),
                               "labels": l, "annotations": {}, "host": "node-2",
                               "container_name": "vault", "docker_id": cid(pod),
                               "container_hash": "hashicorp/vault@sha256:" + cid("img"),
                               "container_image": "hashicorp/vault:1.17.3"}}
    recs = [
        fb("2024-09-03T07:46:00.125Z", "vault-0", "stdout", "==> Vault server started! Log data will stream in below:"),
        fb("2024-09-03T07:46:01.5Z", "vault-0", "stderr", "2024-09-03T07:46:01.500Z [INFO]  core: vault is unsealed"),
        fb("2024-09-03T07:48:09.25Z", "vault-1", "stderr",
           "Error initializing listener of type tcp: error loading TLS cert: open "
           "/vault/userconfig/vault-tls/tls.crt: no such file or directory"),
    ]
    write(f"{d}/fluentbit.ndjson", ndjson(recs))


VARIANTS = {
    "edge-secret-mount": edge_secret_mount,
    "checkout-hook-race": checkout_hook_race,
    "traefik-superseded": lambda d: traefik_superseded(d, "kube-system"),
    "traefik-target-ns": lambda d: traefik_superseded(d, "traefik"),
    "prefix-siblings": prefix_siblings,
    "gaps-and-series": gaps_and_series,
    "quiet-release": quiet_release,
    "vault-fluentbit-labels": vault_fluentbit_labels,
}

if __name__ == "__main__":
    for name, fn in VARIANTS.items():
        fn(name)
