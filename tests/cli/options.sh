#!/bin/sh
# The CLI's one vocabulary: the shared topology options in every command
# that reads a topology, option and value errors with their suggestions,
# 'autosync help CMD', the old spellings (with a note), empty values.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
FIX=${AUTOSYNC_FIXTURES:-$SRCDIR/tests/fixtures/topologies}
CAT=$SRCDIR/planner/catalog
TOPO=$FIX/hwloc-juwels-booster-4xA100-4xHDR.xml
unset CUDA_VISIBLE_DEVICES SLURM_STEP_GPUS SLURM_JOB_GPUS AUTOSYNC_CATALOG_DIR
export TMPDIR=$TMP

# autosync help CMD = autosync CMD --help, on stdout, exit 0
for c in topo plan config feedback bench launch; do
  a=$("$AUTOSYNC" help $c); rc=$?
  b=$("$AUTOSYNC" $c --help)
  is "$rc" 0 "autosync help $c exits 0"
  ok "$([ -n "$a" ] && [ "$a" = "$b" ]; echo $?)" "autosync help $c prints what $c --help prints"
done
like "$("$AUTOSYNC" help plan | head -1)" "^usage: autosync plan --model NAME\|FILE \[options\]$" "autosync help plan: the usage line"
for c in topo plan bench launch; do
  h=$("$AUTOSYNC" help $c)
  like "$h" "^  -T, --topology FILE\|live\|none$" "$c --help: the shared --topology"
  like "$h" "^  -g, --gpus LIST\|all  " "$c --help: the shared --gpus"
done
for c in plan bench launch; do
  like "$("$AUTOSYNC" help $c)" "^      --network SPEC  " "$c --help: the shared --network"
done
out=$("$AUTOSYNC" help lanch 2>&1); rc=$?
is "$rc:$out" "2:autosync: unknown command 'lanch' (did you mean 'launch'?); one of topo, plan, config, feedback, eval, train, promote, bench, launch, init, help or version" "help with an unknown command: did you mean"
out=$("$AUTOSYNC" plna 2>&1); rc=$?
is "$rc:$out" "2:autosync: unknown command 'plna' (did you mean 'plan'?); one of topo, plan, config, feedback, eval, train, promote, bench, launch, init, help or version" "an unknown command: did you mean (a swap is one edit)"

# unknown options, missing values, enumerated values
out=$("$AUTOSYNC" plan --netwrok x 2>&1); rc=$?
is "$rc:$out" "2:autosync plan: unknown option '--netwrok' (did you mean '--network'?)
Try 'autosync help plan'." "an unknown option: the closest one"
out=$("$AUTOSYNC" topo --bogus 2>&1); rc=$?
is "$rc:$out" "2:autosync topo: unknown option '--bogus'
Try 'autosync help topo'." "nothing close: no suggestion"
out=$("$AUTOSYNC" plan -m 2>&1); rc=$?
is "$rc:$out" "2:autosync plan: -m needs a value
Try 'autosync help plan'." "a missing value"
out=$("$AUTOSYNC" launch --explain=yes -- true 2>&1); rc=$?
is "$rc:$out" "2:autosync launch: --explain takes no value
Try 'autosync help launch'." "a value for a flag"
out=$("$AUTOSYNC" plan --config none --catalog "$CAT" -m resnet50 -f pytorch-dpp 2>&1); rc=$?
is "$rc:$out" "2:autosync plan: --framework: unknown value 'pytorch-dpp' (did you mean 'pytorch-ddp'?); one of generic, pytorch-ddp, horovod or autodist" "--framework: suggestion and the valid values"
out=$("$AUTOSYNC" plan --config none --catalog "$CAT" -m resnet50 -b paralax 2>&1); rc=$?
is "$rc:$out" "2:autosync plan: --baseline: unknown value 'paralax' (did you mean 'parallax'?); one of ddp-default, horovod-default, ps-loadbalanced, parallax or allreduce-per-tensor" "--baseline: suggestion and the valid values"
out=$("$AUTOSYNC" bench -m resnet50 --framework mxnet 2>&1); rc=$?
is "$rc:$out" "2:autosync bench: --framework: unknown value 'mxnet'; one of generic, pytorch-ddp, horovod or autodist" "bench --framework: the valid values"
out=$("$AUTOSYNC" bench -m resnet50 --compute spn 2>&1); rc=$?
is "$rc:$out" "2:autosync bench: --compute: unknown value 'spn' (did you mean 'spin'?); one of sleep or spin" "bench --compute"
out=$("$AUTOSYNC" bench -m resnet50 --strategies autosync,horovod-defualt 2>&1); rc=$?
is "$rc:$out" "2:autosync bench: --strategies: unknown value 'horovod-defualt' (did you mean 'horovod-default'?); one of autosync, autosync-learned, ddp-default, horovod-default, ps-loadbalanced, parallax or allreduce-per-tensor" "bench --strategies: each item"
out=$("$AUTOSYNC" topo --format json 2>&1); rc=$?
is "$rc:$out" "2:autosync topo: --format: unknown value 'json'; one of text or yaml" "topo --format"
out=$("$AUTOSYNC" config chek x 2>&1); rc=$?
is "$rc:$out" "2:autosync config: subcommand: unknown value 'chek' (did you mean 'check'?); one of check" "config: the subcommand"

# model names: the closest catalog model and the catalog
out=$("$AUTOSYNC" plan --config none --catalog "$CAT" -m resnet05 2>&1); rc=$?
is "$rc" 1 "an unknown model: exit 1"
like "$out" "^autosync plan: model 'resnet05': not in the catalog \(searched $CAT.*\); did you mean 'resnet50'\? \(models: bert-base, bert-large, .*, resnet50,.* or vgg16\)$" "an unknown model: did you mean, and the catalog's models"
out=$("$AUTOSYNC" launch --config none --catalog "$CAT" -m bert_large -- true 2>&1); rc=$?
is "$rc" 0 "launch with an unknown model runs the command (fail open)"
like "$out" "did you mean 'bert-large'\? \(models: .*\); running without autosync$" "and says which model was meant"

# empty values name their option, never mean a default
for c in plan launch bench; do
  out=$("$AUTOSYNC" $c --config none -m resnet50 --network "" -- true 2>&1); rc=$?
  [ $c = bench ] && out=$("$AUTOSYNC" $c -m resnet50 --network "" 2>&1) && rc=$?
  is "$rc:$out" "2:autosync $c: --network: an empty value (give items such as nodes=4,gpus=8)" "$c --network '': an error naming it"
done
out=$("$AUTOSYNC" topo --topology "" 2>&1); rc=$?
is "$rc:$out" "2:autosync topo: --topology: an empty value (give FILE, live or none)" "--topology ''"
out=$("$AUTOSYNC" plan --config none -m resnet50 -T "$TOPO" --gpus "" 2>&1); rc=$?
is "$rc:$out" "2:autosync plan: --gpus: an empty value (give a list such as 0,1 or all)" "--gpus ''"
out=$("$AUTOSYNC" plan --config none -m resnet50 --network nodes=x 2>&1); rc=$?
like "$rc:$out" "^2:autosync plan: --network: .*nodes" "a bad --network names the option and the item"

# the shared topology options in every command that reads a topology
out=$("$AUTOSYNC" topo -T "$TOPO" -g 1,3 2>&1); rc=$?
like "$rc:$out" "^0:topology: hwloc-xml" "topo -T FILE -g LIST"
like "$out" "GPUs: 2 of 4" "  keeps those GPUs"
out=$("$AUTOSYNC" topo --topology "$TOPO" --gpus all 2>&1)
like "$out" "GPUs: 4 of 4" "topo --gpus all"
out=$("$AUTOSYNC" topo --topology none 2>&1); rc=$?
is "$rc:$out" "2:autosync topo: --topology none: no topology to show" "topo --topology none"
# live inside a container: hwloc sees the node (here the fixture, through
# hwloc's own HWLOC_XMLFILE), the device plugin's list says which GPUs
L="env -u SLURM_STEP_GPUS -u SLURM_JOB_GPUS -u CUDA_VISIBLE_DEVICES HWLOC_XMLFILE=$TOPO"
like "$($L "$AUTOSYNC" topo 2>&1)" "GPUs: 4 of 4" "topo live, no list: every GPU of the node"
like "$($L NVIDIA_VISIBLE_DEVICES=1,3 "$AUTOSYNC" topo 2>&1)" "GPUs: 2 of 4" "topo live, NVIDIA_VISIBLE_DEVICES=1,3: the container's 2 GPUs"
like "$($L NVIDIA_VISIBLE_DEVICES=1,3 CUDA_VISIBLE_DEVICES=1 "$AUTOSYNC" topo 2>&1)" "GPUs: 1 of 4" "  CUDA_VISIBLE_DEVICES=1 within them: 1"
out=$($L NVIDIA_VISIBLE_DEVICES=none "$AUTOSYNC" topo 2>&1); rc=$?
is "$rc:$out" "1:autosync topo: NVIDIA_VISIBLE_DEVICES=none: the container has no GPU" "topo live, NVIDIA_VISIBLE_DEVICES=none: says why"
out=$("$AUTOSYNC" plan --config none --catalog "$CAT" -m resnet50 -T "$TOPO" -g 1,3 -N 2 -o "$TMP/p.yaml" 2>&1); rc=$?
is "$rc" 0 "plan -T FILE -g LIST -N 2"
is "$(grep -E '^    (nodes|gpus_per_node|nics_per_node):' "$TMP/p.yaml" | tr -d ' ' | paste -sd,)" "nodes:2,gpus_per_node:2,nics_per_node:2" "  planned for the 2 kept GPUs and their NICs"
"$AUTOSYNC" plan --config none --catalog "$CAT" -m resnet50 --network nodes=2,gpus=4 --gpus-per-node 2 -o "$TMP/q.yaml" >/dev/null 2>&1
is "$(grep -E '^    gpus_per_node:' "$TMP/q.yaml" | tr -d ' ')" "gpus_per_node:2" "plan --gpus-per-node (no longer -g)"
out=$("$AUTOSYNC" plan --config none --catalog "$CAT" -m resnet50 --topology none -g 0 2>&1); rc=$?
is "$rc:$out" "2:autosync plan: --gpus needs --topology (or the site config's topology_xml)" "plan --gpus without a topology"
out=$("$AUTOSYNC" launch --config none --catalog "$CAT" --plugin-dir /nonexistent -T "$TOPO" -g 2 -N 2 -m resnet50 -q -- sh -c 'echo "$NCCL_IB_HCA"' 2>&1); rc=$?
is "$rc:$out" "0:=mlx5_2:1" "launch -T FILE -g 2: the kept GPU's nearest NIC"
out=$("$AUTOSYNC" bench -m resnet50 -g 0 2>&1); rc=$?
is "$rc:$out" "2:autosync bench: --gpus needs --topology" "bench --gpus without a topology"
out=$(ASAN_OPTIONS=detect_leaks=0 AUTOSYNC_CATALOG_DIR=$CAT "$AUTOSYNC" bench -m resnet50 --scale 64 -T "$TOPO" -g 0,1 --steps 1 --warmup 0 2>&1); rc=$?
case $out in
*"built when configure finds Open MPI"*)
  echo "ok $((_n + 1)) # SKIP bench: autosync-bench not built (no MPI)"; echo "ok $((_n + 2)) # SKIP bench: autosync-bench not built (no MPI)"; _n=$((_n + 2)) ;;
*)
  is "$rc" 0 "bench -T FILE -g LIST"
  like "$out" "cluster nodes=1,gpus=1,intra=host_bridge:12000000000B/s.*,nics=2x" "  the node part of its network from the topology" ;;
esac

# the runs are autosync-bench's, a program of its own (autosync links no MPI)
out=$(AUTOSYNC_LIBEXECDIR=$TMP/none AUTOSYNC_CATALOG_DIR=$CAT "$AUTOSYNC" bench -m resnet50 --steps 1 2>&1); rc=$?
is "$rc:$out" "1:autosync bench: cannot run $TMP/none/autosync-bench: No such file or directory (it is built when configure finds Open MPI)" "bench without autosync-bench: what is missing and why"
like "$(AUTOSYNC_LIBEXECDIR=$TMP/none "$AUTOSYNC" help bench | tail -1)" "^The runs are made by $TMP/none/autosync-bench, which is not installed" "help bench: says where the runs are made, and that it is missing"

# the old spellings still work, with one line on stderr
out=$("$AUTOSYNC" topo --input "$TOPO" 2>&1 >/dev/null); rc=$?
is "$rc:$out" "0:autosync topo: --input is deprecated; use --topology" "topo --input: works, with a note"
out=$("$AUTOSYNC" topo -i "$TOPO" -c 0-3 -f yaml -e 2>&1 >/dev/null); rc=$?
is "$rc:$out" "0:autosync topo: -i is deprecated; use --topology
autosync topo: -c is deprecated; use --cpus
autosync topo: -f is deprecated; use --format
autosync topo: -e is deprecated; use --env" "topo -i -c -f -e: work, with a note each"
is "$("$AUTOSYNC" topo -i "$TOPO" -f yaml 2>/dev/null)" "$("$AUTOSYNC" topo -T "$TOPO" --format yaml)" "  and mean what they meant"
out=$(ASAN_OPTIONS=detect_leaks=0 "$AUTOSYNC" bench -m resnet50 --cluster "" 2>&1); rc=$?
is "$rc:$out" "2:autosync bench: --cluster is deprecated; use --network
autosync bench: --network: an empty value (give items such as nodes=4,gpus=8)" "bench --cluster: the note, then the same checks as --network"
out=$(ASAN_OPTIONS=detect_leaks=0 "$AUTOSYNC" bench -m resnet50 --compress --out "$TMP/o" --hier x 2>&1); rc=$?
is "$rc:$out" "2:autosync bench: --compress is deprecated; use --allow-compression
autosync bench: --out is deprecated; use --output
autosync bench: --hier: unknown value 'x'; one of leader or rails" "bench --compress, --out: notes"
out=$(ASAN_OPTIONS=detect_leaks=0 "$AUTOSYNC" bench -m resnet50 --random-space all 2>&1); rc=$?
is "$rc:$out" "2:autosync bench: --random-space: unknown value 'all'; one of narrow or wide" "bench --random-space: its two values"
like "$("$AUTOSYNC" help bench)" "--random-space narrow|wide" "help bench: --random-space"
out=$("$AUTOSYNC" plan --network nodes=2 --cluster x 2>&1 | head -1)
is "$out" "autosync plan: unknown option '--cluster'" "the old spellings are bench's own: plan never had --cluster"
# topo -x: a failed write leaves an existing file as it was
"$AUTOSYNC" topo -T "$TOPO" -x "$TMP/nccl.xml" >/dev/null 2>&1
cp "$TMP/nccl.xml" "$TMP/nccl.xml.before"
( trap '' XFSZ; ulimit -f 1; "$AUTOSYNC" topo -T "$FIX/hwloc-dgx2h-16xV100-12xNVSwitch.xml" -x "$TMP/nccl.xml" >/dev/null 2>&1 ); rc=$?
is "$rc:$(cmp "$TMP/nccl.xml" "$TMP/nccl.xml.before" 2>&1):$(ls "$TMP" | grep -c '^nccl\.xml\.tmp')" "1::0" "topo -x: a failed write leaves the old file whole, no temporary"
done_testing
