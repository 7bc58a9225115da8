#!/bin/sh
# The bash completion (cli/bash-completion/autosync) against the built
# binary: commands, options read from each command's --help, the values the
# help lists, catalog models, files.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
export AUTOSYNC_CATALOG_DIR=$SRCDIR/planner/catalog
# complete LINE: what TAB offers at the end of LINE, sorted, one line
complete_line() {
	local line=$1
	COMP_LINE=$line COMP_POINT=${#line}
	read -ra COMP_WORDS <<<"$line"
	case $line in *' ') COMP_WORDS+=(""); esac
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_WORDS[0]=$AUTOSYNC
	COMPREPLY=()
	_autosync
	printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | paste -sd' '
}
. "$SRCDIR/cli/bash-completion/autosync"
is "$(complete -p autosync)" "complete -F _autosync autosync" "registered for the autosync command"

is "$(complete_line 'autosync ')" "bench config eval feedback help init launch plan promote topo train version" "every command"
is "$(complete_line 'autosync pl')" "plan" "a command from its prefix"
is "$(complete_line 'autosync help f')" "feedback" "help COMMAND"
is "$(complete_line 'autosync config ')" "check" "config check"
is "$(complete_line 'autosync topo --')" "--cpus --env --format --gpus --help --nccl-xml --topology" "topo's long options, from topo --help"
is "$(complete_line 'autosync plan --mo')" "--model" "an option from its prefix"
is "$(complete_line 'autosync launch --no-')" "--no-profiler --no-tuner" "launch's --no- options"
is "$(complete_line 'autosync topo --format ')" "text yaml" "the values the help lists (--format text|yaml)"
is "$(complete_line 'autosync bench --backend n')" "nccl" "a value from its prefix (--backend mpi|nccl)"
is "$(complete_line 'autosync plan -m resnet')" "resnet101 resnet50" "catalog models for -m NAME|FILE"
# bash splits "--format=y" at the '=' (COMP_WORDBREAKS)
COMP_WORDS=("$AUTOSYNC" topo --format = y) COMP_CWORD=4 COMPREPLY=()
_autosync
is "${COMPREPLY[*]}" "yaml" "--format=VALUE"
cd "$TMP" && mkdir -p sub && : > lxfile.xml
is "$(complete_line 'autosync topo -T l')" "live lxfile.xml" "-T FILE|live|none: the words and files"
is "$(complete_line 'autosync plan --catalog s')" "sub" "--catalog DIR: directories"
is "$(complete_line 'autosync launch -p plan.yaml -- ech')" "$(compgen -c -f -- ech | LC_ALL=C sort | paste -sd' ')" "after launch --: commands"
done_testing
