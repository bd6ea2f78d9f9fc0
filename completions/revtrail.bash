# bash completion for revtrail(1). Installed by make install into
# share/bash-completion/completions/revtrail.

_revtrail()
{
	local cur prev cmd opts
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=${COMP_WORDS[1]}

	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "ingest incidents show report query
			consume classify rules prune fleet help --help --version" -- "$cur"))
		return
	fi

	local input="--format --max-record --rules --no-default-rules --release
		--helm-tz -v --verbose"
	case $cmd in
	help)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "ingest
			incidents show report query consume classify rules prune fleet" -- "$cur"))
		return ;;
	ingest) opts="--db --gap --regap --keep-untagged -f --follow --cluster --log-format
		--max-registry --retain $input --help" ;;
	incidents) opts="--db -o --output --open -n --namespace -A --all-namespaces
		--release --cluster --since --no-headers --color -w --watch --help" ;;
	show) opts="--db -o --output --color --cluster -w --watch --help" ;;
	report) opts="--db -o --output --all -n --namespace --cluster --help" ;;
	query) opts="--db -o --output --no-headers --timeout --max-memory --help" ;;
	consume) opts="-b --brokers -t --topic -G --group -X --property -F
		--properties-file --db --start --batch-messages --batch-ms
		--status-interval --stats-json --log-format --http --ready-lag
		--incidents-topic --helm-topic -e --exit-at-end --gap --regap --keep-untagged --cluster
		--max-registry --retain $input --help" ;;
	prune) opts="--db --retain --help" ;;
	fleet) opts="-b --brokers -t --topic -X --property -F --properties-file
		--db -e --exit-at-end --batch-messages --batch-ms --gap --stats-json
		--http --ready-lag --help" ;;
	classify) opts="--all $input --help" ;;
	rules) opts="list check test --rules --no-default-rules -v --verbose
		--help" ;;
	*) return ;;
	esac

	case $prev in
	-o|--output)
		case $cmd in
		incidents) COMPREPLY=($(compgen -W "table wide json csv csv-raw" -- "$cur")) ;;
		show) COMPREPLY=($(compgen -W "text json html" -- "$cur")) ;;
		report) COMPREPLY=($(compgen -W "html" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "table json csv csv-raw" -- "$cur")) ;;
		esac
		return ;;
	--color)
		COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
		return ;;
	--start)
		COMPREPLY=($(compgen -W "group earliest latest" -- "$cur"))
		return ;;
	--log-format)
		COMPREPLY=($(compgen -W "text json" -- "$cur"))
		return ;;
	--format)
		COMPREPLY=($(compgen -W "k8s-event exporter cri docker fluentbit
			vector helm-history helm-list helm-status helm-storage
			helm-text json text" -- "$cur"))
		return ;;
	--db|--rules|--stats-json|-F|--properties-file)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--helm-tz)
		local d=${TZDIR:-/usr/share/zoneinfo}
		COMPREPLY=($(cd "$d" 2>/dev/null && compgen -f -- "$cur"))
		return ;;
	--gap|--since|--timeout|--max-record|--max-memory|--max-registry|--retain|\
	--release|-n|\
	--namespace|-b|-t|-G|-X|--batch-messages|--batch-ms|--status-interval|\
	--http|--ready-lag)
		return ;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	elif [ "$cmd" = rules ] && [ "$COMP_CWORD" -eq 2 ]; then
		COMPREPLY=($(compgen -W "list check test" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _revtrail revtrail
