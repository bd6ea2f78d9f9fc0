#!/usr/bin/env python3
"""Checks the Kubernetes manifests in deploy/kubernetes (t5500): every
workload runs `revtrail consume --http` with only options its --help
names, declares that port, probes /healthz (liveness) and /readyz
(readiness) on it with httpGet, is annotated for Prometheus on it, and has
resources; a StatefulSet has its headless Service. Prints one problem a
line; silent when all is well."""
import sys

import yaml

problems = []


def check_pod(kind, name, tmpl, help_text):
    spec = tmpl["spec"]
    ann = tmpl["metadata"].get("annotations", {})
    for c in spec["containers"]:
        args = c.get("args", [])
        where = f"{kind}/{name}/{c['name']}"
        if args[:1] != ["consume"] or "--http" not in args:
            problems.append(f"{where}: not `consume --http`")
            continue
        for a in args:
            if a.startswith("--") and a not in help_text:
                problems.append(f"{where}: {a} is not in consume --help")
        port = int(args[args.index("--http") + 1].rsplit(":", 1)[1])
        ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
        if port not in ports.values():
            problems.append(f"{where}: no containerPort {port}")
        for probe, path in (("livenessProbe", "/healthz"),
                            ("readinessProbe", "/readyz")):
            get = c.get(probe, {}).get("httpGet")
            if not get or get.get("path") != path:
                problems.append(f"{where}: {probe} is not httpGet {path}")
                continue
            p = get.get("port")
            if ports.get(p, p) != port:
                problems.append(f"{where}: {probe} port {p} is not {port}")
        if ann.get("prometheus.io/scrape") != "true" or \
                ann.get("prometheus.io/port") != str(port):
            problems.append(f"{where}: no prometheus.io annotations for {port}")
        res = c.get("resources", {})
        if "requests" not in res or "limits" not in res:
            problems.append(f"{where}: no resource requests and limits")


def main():
    help_text = open(sys.argv[1]).read()
    docs = []
    for path in sys.argv[2:]:
        with open(path) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    for d in docs:
        if d["kind"] not in ("Deployment", "StatefulSet"):
            continue
        name = d["metadata"]["name"]
        check_pod(d["kind"], name, d["spec"]["template"], help_text)
        if d["kind"] == "StatefulSet":
            svc = services.get(d["spec"].get("serviceName"))
            if not svc or svc["spec"].get("clusterIP") != "None":
                problems.append(f"StatefulSet/{name}: no headless Service")
    for p in problems:
        print(p)


main()
