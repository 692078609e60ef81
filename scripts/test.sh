#!/usr/bin/env bash
# Set up, build and run every test (meson test). Needs no hugepages and no NIC.
#   scripts/test.sh              release build in build/
#   scripts/test.sh --sanitize   ASan + UBSan build in build-asan/
#   scripts/test.sh --valgrind   the tests under valgrind (meson test setup 'valgrind')
#   scripts/test.sh --clang      clang build in build-clang/, libFuzzer harnesses included
#   extra arguments after -- go to meson test (e.g. -- --suite am)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build
setup_opts=()
test_opts=()
extra_pkgs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--sanitize) dir=build-asan; setup_opts=(-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized) ;;
	--valgrind) test_opts+=(--setup=valgrind) ;;
	--clang) dir=build-clang; setup_opts=(-Dfuzz=true); extra_pkgs=(clang libclang-rt-14-dev); export CC=clang ;;
	--) shift; test_opts+=("$@"); break ;;
	*) echo "usage: $0 [--sanitize|--clang] [--valgrind] [-- meson-test-args]"; exit 2 ;;
	esac
	shift
done
./scripts/setup.sh "${extra_pkgs[@]}"
./scripts/build.sh "$dir" "${setup_opts[@]}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$PWD/scripts/ubsan.supp}
meson test -C "$dir" --print-errorlogs --num-processes 2 "${test_opts[@]}"
