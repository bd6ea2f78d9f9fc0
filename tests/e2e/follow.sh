# follow.sh: what the ingest --follow tests share, sourced after lib.sh.
# $L is a directory of kubelet-named logs; line appends the next distinct
# tagged CRI line to a file ($n counts them); records reads how many
# records a run's summary on stderr counted.
ID=$(printf '%064d' 7)
L=$T/logs
mkdir "$L"
n=0
line() {   # line FILE: appends the next distinct tagged line to FILE
	n=$((n + 1))
	echo "2026-12-01T10:00:00.000000001Z stderr F Error: configmap \"cfg-$n\" not found" >> "$1"
}
records() {   # records FILE: the records a run's summary counted
	sed -n 's/^ingest: \([0-9]*\) records.*/\1/p' "$1"
}
