#!/usr/bin/env bash
# The main job: installs what is missing, builds, and shows what memfmt does
# to a ResNet bottleneck block and to a whole ResNet-50 (batch 8, 224x224):
# the IR before and after the channels-last pipeline, and the layout
# report (conversions left, bytes moved per run) before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh memfmt-opt
OPT=${BUILD_DIR:-build}/bin/memfmt-opt
EXAMPLE=docs/examples/resnet50_bottleneck.mlir
RESNET=test/Dialect/MemFmt/Transforms/Inputs/resnet50.mlir

echo "== A ResNet-50 bottleneck block, NCHW as saved ($EXAMPLE)"
cat "$EXAMPLE"
echo
echo "== After memfmt-opt --memfmt-channels-last"
"$OPT" "$EXAMPLE" --memfmt-channels-last
echo
echo "== ResNet-50 (batch 8, 224x224): layout report before the pipeline"
"$OPT" "$RESNET" --memfmt-report -o /dev/null
echo "== after --memfmt-channels-last (NCHW input converted at entry)"
"$OPT" "$RESNET" --memfmt-channels-last --memfmt-report -o /dev/null
echo "== after --memfmt-channels-last=\"inputs=channels-last\" (caller holds NHWC data)"
"$OPT" "$RESNET" --memfmt-channels-last="inputs=channels-last" \
  --memfmt-report -o /dev/null
