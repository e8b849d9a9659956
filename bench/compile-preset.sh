# Sourced by the preset benches: compile_preset PRESET MODE OPTIONS TIMEOUT
# compiles a --gpt-config preset (weights elided, $seq tokens, under MEM_GB
# of virtual memory and TIMEOUT seconds) into $out/PRESET-MODE.json. It sets
# `wall` (s), `rss` (KiB) and `rep`; on failure it returns 1 and sets `why`,
# the log's first error line.
compile_preset() {
  local p=$1 mode=$2 options=$3 timeout=$4 stem="$out/$(basename "$1" .json)-$2"
  rep="$stem.json"
  rm -f "$rep"
  /usr/bin/time -f "%e %M" -o "$stem.time" bash -c \
    "ulimit -v $((${MEM_GB:-14} * 1024 * 1024)); $bin/wsc-translate --gpt-config=$p --seq=$seq | timeout $timeout $bin/wsc-opt --wsc-pipeline='$options mode=$mode report=$rep' -o /dev/null" \
    > "$stem.log" 2>&1
  local status=$?
  read -r wall rss < <(tail -n 1 "$stem.time")
  why=$(grep -m1 -i 'error\|killed\|memory' "$stem.log")
  [[ $status -eq 0 && -f $rep ]]
}
