#!/bin/sh
# What reaches the terminal from files, names and paths is escaped: the
# plan summary's model name and reason, error messages that quote a file's
# value or its path; NIC names that NCCL's variables could not carry are
# refused where they are read.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
unset CUDA_VISIBLE_DEVICES SLURM_STEP_GPUS SLURM_JOB_GPUS AUTOSYNC_CATALOG_DIR
export TMPDIR=$TMP
ESC=$(printf '\033')
RLO=$(printf '\342\200\256') # U+202E, right-to-left override

printf 'autosync_model: 1\nname: "a\\x1b[31mb\\u202e"\ntensors:\n  - {name: w, shape: [1000], dtype: fp32}\n' > "$TMP/evil.yaml"
out=$("$AUTOSYNC" plan --config none -m "$TMP/evil.yaml" -N 2 --gpus-per-node 2 2>&1)
is "$(printf '%s\n' "$out" | head -1)" '# autosync plan for a\x1b[31mb\u{202e} (1000 parameters, 1 tensors, batch 32) on 2 node(s) x 2 GPU(s), framework pytorch-ddp' "plan summary: the model's name escaped"
is "$(printf '%s' "$out" | grep -c "$ESC\|$RLO")" 0 "plan summary: no escape or bidi character on the terminal"

out=$("$AUTOSYNC" plan --config none -m "$TMP/x${ESC}[31m" 2>&1)
is "$out" "autosync plan: model file $TMP/x\\x1b[31m: No such file or directory" "a path in an error: escaped"

printf '<system version="1">\n<cpu numaid="0" affinity="ff" arch="x86_64" vendor="x">\n<pci busid="zz%s]0;x\a"/>\n</cpu></system>\n' "$ESC" > "$TMP/t.xml"
out=$("$AUTOSYNC" topo -T "$TMP/t.xml" 2>&1)
is "$out" "autosync topo: $TMP/t.xml: line 3: <pci>: bad busid 'zz\\x1b]0;x\\x07'" "a topology file's value in an error: escaped"

printf '<system version="1">\n<cpu numaid="0" affinity="ff" arch="x86_64" vendor="x">\n<nic><net name="ml%s]0;x" dev="0"/></nic>\n</cpu></system>\n' "$ESC" > "$TMP/n.xml"
out=$("$AUTOSYNC" topo -T "$TMP/n.xml" 2>&1); rc=$?
is "$rc:$out" "1:autosync topo: $TMP/n.xml: line 3: <net>: bad name 'ml\\x1b]0;x' (1 to 31 letters, digits or _.:@-)" "a NIC name NCCL_IB_HCA could not carry: refused, escaped"
done_testing
