#!/usr/bin/env python3
"""Writes release-secrets.json: the Helm storage Secrets of revisions 3 and
4 of shop/checkout, as `kubectl get secret -n shop -l owner=helm,
name=checkout -o json` prints them (data.release is base64 of Helm's own
base64(gzip(release JSON))). Revision 4 renames the Deployment's ConfigMap
volume (checkout-config -> checkout-api-config, which the chart does not
ship) and moves the image from 2.7.3 to 2.8.0."""
import base64, gzip, json

def manifest(cm, image):
    return f"""---
# Source: checkout/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: checkout-config
data:
  config.yaml: |
    listen: 8080
    payments: http://payments.shop.svc:8080
---
# Source: checkout/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: checkout-api
spec:
  ports:
  - port: 80
    targetPort: 8080
---
# Source: checkout/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout-api
  labels:
    app.kubernetes.io/instance: checkout
spec:
  replicas: 2
  template:
    metadata:
      labels:
        app.kubernetes.io/instance: checkout
    spec:
      containers:
      - name: web
        image: "registry.example.com/shop/checkout-api:{image}"
        volumeMounts:
        - name: config
          mountPath: /etc/app
        readinessProbe:
          httpGet:
            path: /healthz
            port: 8080
        resources:
          limits:
            memory: 512Mi
      volumes:
      - name: config
        configMap:
          name: {cm}
"""

def release(rev, status, updated, desc, cm, image, appver):
    return {"name": "checkout", "namespace": "shop", "version": rev,
            "info": {"first_deployed": "2024-09-01T10:00:00Z",
                     "last_deployed": updated, "status": status,
                     "description": desc},
            "chart": {"metadata": {"name": "checkout", "version": f"1.{rev}.0",
                                   "appVersion": appver}},
            "hooks": [], "manifest": manifest(cm, image)}

def secret(rel, modified):
    inner = base64.b64encode(gzip.compress(json.dumps(rel).encode(), mtime=0))
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "data": {"release": base64.b64encode(inner).decode()},
            "metadata": {"name": f"sh.helm.release.v1.checkout.v{rel['version']}",
                         "namespace": "shop",
                         "labels": {"modifiedAt": modified, "name": "checkout",
                                    "owner": "helm", "status": rel["info"]["status"],
                                    "version": str(rel["version"])}}}

items = [
    secret(release(3, "superseded", "2024-09-01T10:00:00Z", "Upgrade complete",
                   "checkout-config", "2.7.3", "2.7.3"), "1725271200"),
    secret(release(4, "deployed", "2024-09-02T10:00:00Z", "Upgrade complete",
                   "checkout-api-config", "2.8.0", "2.8.0"), "1725271200"),
]
with open("release-secrets.json", "w") as f:
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f, indent=1)
    f.write("\n")
