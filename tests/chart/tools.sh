#!/bin/sh
# tests/chart/tools.sh OUTDIR: builds the pinned helm and chartcheck into
# OUTDIR (build/chart), once: a later run finds them there, and Go's module
# and build caches make a fresh clone's build quick on the same machine.
# Prints nothing on success. GO names the go command (default: go).
#
# helm v3.11.3 and k8s.io/api v0.26.2 are the newest that Debian 12's
# golang-go (Go 1.19) builds; a newer Go builds them too.
set -eu
HELM_VERSION=v3.11.3
out=$1
here=$(cd "$(dirname "$0")" && pwd)
: "${GO:=go}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ ! -x "$out/helm-$HELM_VERSION/helm" ]; then
	GOBIN="$out/helm-$HELM_VERSION" GOFLAGS= GOTOOLCHAIN=local \
		"$GO" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
fi
ln -sf "helm-$HELM_VERSION/helm" "$out/helm"
if [ ! -x "$out/chartcheck" ] ||
	[ -n "$(find "$here" -newer "$out/chartcheck" -type f)" ]; then
	(cd "$here" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local \
		"$GO" build -o "$out/chartcheck" .)
fi
