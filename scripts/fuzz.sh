#!/usr/bin/env bash
# Runs each fuzz target of core/fuzz for a short time, one after another,
# starting from the committed seeds (core/fuzz/seeds/<target>/) and whatever
# earlier runs left in core/fuzz/corpus/<target>/ (where libFuzzer writes its
# finds; gitignored). Not part of `npm test`.
#
#   scripts/fuzz.sh [seconds] [target...]     # npm run fuzz -- [seconds] [target...]
#
# seconds: per target (default $FUZZ_SECONDS, else 30). Targets: decode_value,
# decompress, decompress_frame, reassemble (default all). FUZZ_SANITIZER=none
# builds without AddressSanitizer, for machines where it does not link (then
# -malloc_limit_mb is not enforced); FUZZ_FLAGS adds libFuzzer flags (after
# the defaults, so they win), e.g. FUZZ_FLAGS=-seed=1. Installs cargo-fuzz
# when missing. Exits
# non-zero when a target crashes (or runs out of memory or time on an input),
# naming the input libFuzzer saved under core/fuzz/artifacts/<target>/.
set -euo pipefail

seconds="${FUZZ_SECONDS:-30}"
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(decode_value decompress decompress_frame reassemble)
fi

core="$(cd "$(dirname "${BASH_SOURCE[0]}")/../core" && pwd)"
cd "$core"

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
# cargo-fuzz passes nightly flags (-Zsanitizer, sanitizer coverage); this
# lets a stable toolchain accept them (see core/fuzz/README.md).
export RUSTC_BOOTSTRAP="${RUSTC_BOOTSTRAP:-1}"
sanitizer=()
if [[ -n ${FUZZ_SANITIZER:-} ]]; then
  sanitizer=(--sanitizer "$FUZZ_SANITIZER")
fi

log_dir="$(mktemp -d)"
trap 'rm -rf "$log_dir"' EXIT
failed=()
summary=()
for target in "${targets[@]}"; do
  flags=(-max_total_time="$seconds" -rss_limit_mb=1024 -malloc_limit_mb=512)
  if [[ $target == reassemble ]]; then
    flags+=(-max_len=1024 -len_control=0 -dict=fuzz/reassemble.dict)
  fi
  read -r -a extra <<<"${FUZZ_FLAGS:-}"
  flags+=(${extra[@]+"${extra[@]}"})
  if [[ ! -d fuzz/seeds/$target ]]; then
    echo "fuzz: no seeds for $target (fuzz/seeds/$target); known targets have them" >&2
    exit 2
  fi
  mkdir -p "fuzz/corpus/$target"
  echo "fuzz: $target for ${seconds}s"
  log="$log_dir/$target.log"
  status=0
  cargo fuzz run ${sanitizer[@]+"${sanitizer[@]}"} "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" \
    -- "${flags[@]}" 2>&1 | tee "$log" || status=$?
  done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)"
  if [[ $status -eq 0 ]]; then
    summary+=("$target: ok, ${done_line:-no DONE line}")
  else
    artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
    if [[ -n $artifact ]]; then
      [[ $artifact == /* ]] || artifact="$core/${artifact#./}"
      failed+=("$target: input saved at $artifact (see core/fuzz/README.md, 'When a target crashes')")
    else
      failed+=("$target: cargo fuzz exited with $status and saved no input (build error?)")
    fi
  fi
done

echo
for line in ${summary[@]+"${summary[@]}"}; do echo "fuzz: $line"; done
if [[ ${#failed[@]} -gt 0 ]]; then
  for line in "${failed[@]}"; do echo "fuzz: FAILED $line" >&2; done
  exit 1
fi
