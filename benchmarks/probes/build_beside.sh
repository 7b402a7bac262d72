# Sourced by the A/B probes (cluster_bulk.sh, graph_priority.sh, graph_plans.sh, sr_chain.sh,
# split_tail.sh, rest_occ.sh): builds of the working tree and of patched copies of it, side by
# side, on a GPU machine without network, and their timings in turn.
# Concurrent builds need their own source copies (scikit-build-core's build folder is in the tree)
# and their own TMPDIR (nvcc's temporary files collided in a shared one: GPU_NOTES.md, s26).
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
R=$(pwd)
builds_t0=$(date +%s)

build_main() {  # the working tree, installed where `python` imports it from
  APSP_CUDA_ARCHITECTURES=90-real python -m pip install --no-build-isolation --no-deps -q . \
    > /tmp/build_main.log 2>&1 || { echo "main build failed"; tail -20 /tmp/build_main.log; }
}

build_patched() {  # TAG PATCH [COMMAND]: the tree with PATCH applied (then COMMAND run in the
                   # copy) installed into /tmp/siteTAG, for PYTHONPATH=/tmp/siteTAG
  local tag=$1 patch=$2 cmd=${3:-true} src=/tmp/src$1
  mkdir -p $src /tmp/tmp$tag && cp -r CMakeLists.txt pyproject.toml README.md python cpp src $src/ \
    && (cd $src && patch -s -p1 < $R/benchmarks/probes/$patch && eval "$cmd") \
    && TMPDIR=/tmp/tmp$tag APSP_CUDA_ARCHITECTURES=90-real python -m pip install --no-build-isolation \
         --no-deps -q --target /tmp/site$tag $src > /tmp/build$tag.log 2>&1 \
    || { echo "build $tag failed"; tail -20 /tmp/build$tag.log; }
}

wait_builds() {  # waits for the builds started in the background, and says how long they took
  wait
  echo "builds done in $(( $(date +%s) - builds_t0 )) s"
}

time_in_turn() {  # FILE LABEL "CASES_MAIN" "CASES_1": time_small.py under the main build, then
                  # under /tmp/site1 (labelled LABEL), twice in turn; appended to $OUT/FILE
  local file=$1 label=$2 main_cases=$3 cases=$4
  for pass in 1 2; do
    python benchmarks/probes/time_small.py main $main_cases 2>&1 | tee -a $OUT/$file
    PYTHONPATH=/tmp/site1 python benchmarks/probes/time_small.py $label $cases 2>&1 | tee -a $OUT/$file
  done
}
