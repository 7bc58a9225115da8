#!/bin/sh
# dataset-models.sh OUTDIR - export the convolutional torchvision models the
# dataset adds to the catalog's (docs/dataset.md), one OUTDIR/NAME.yaml each,
# with contrib/pytorch/autosync_export.py: batch 32, 224x224 images, FLOPs
# counted by a forward pass. Not the catalog's densenet121 or inception_v3:
# those are kept out of the dataset to check the result. Needs torch and
# torchvision (Debian: python3-torch, python3-torchvision 0.14.1); then
#   MODEL_DIR=OUTDIR MODELS="resnet18:4 alexnet:16 mobilenet_v2:1" \
#     tests/lab/dataset.sh DATASET
# (the scales keep each model's gradients at 10-16 MB, like the catalog's).
set -eu
OUT=${1:?usage: dataset-models.sh OUTDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
EXPORT="$HERE/../../contrib/pytorch/autosync_export.py"
mkdir -p "$OUT"
# name and expected parameter count (torchvision 0.14.1)
for m in resnet18:11689512 alexnet:61100840 mobilenet_v2:3504872 \
	efficientnet_b0:5288548; do
	name=${m%%:*} want=${m##*:}
	"$PY" "$EXPORT" --import torchvision "torchvision.models.$name()" \
		-o "$OUT/$name.yaml" --name "$name" --batch-size 32 \
		--input 'torch.randn(1,3,224,224)' >/dev/null
	got=$(sed -n 's/^params: //p' "$OUT/$name.yaml")
	if [ "$got" != "$want" ]; then
		echo "dataset-models.sh: $name has $got parameters, expected $want" >&2
		exit 1
	fi
	echo "$name $got"
done
