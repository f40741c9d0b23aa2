#!/usr/bin/env bash
# Installs agent-eval for the composite action (python/action.yml) into a virtual environment in
# the runner's temp folder, from this action's own checkout, and puts the path of its
# `agent-eval` command into GITHUB_ENV as AGENT_EVAL_BIN:
#   1. the runner's Python: $PYTHON, else python3, else python; 3.11 or newer;
#   2. the dependencies and the pinned build backend with --require-hashes, wheels only
#      (requirements/action.txt and requirements/build.txt: every file of every pinned version,
#      so every platform with a wheel of each installs exactly the locked set: Linux x86_64 and
#      arm64, macOS on Apple silicon, Windows x64; cryptography, which PyGithub needs, has no
#      wheel for an Intel Mac or Windows on Arm, and pip's failure is then explained);
#   3. agent-eval built from this checkout, without build isolation and without an index.
# Works in bash on Linux, macOS and Windows runners (Git Bash).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
die() { echo "::error title=agent-eval::$*"; exit 2; }

py=${PYTHON:-}
if [ -z "$py" ]; then
  for candidate in python3 python; do
    if command -v "$candidate" >/dev/null 2>&1; then py=$candidate; break; fi
  done
fi
[ -n "$py" ] || die "no Python on the PATH: add actions/setup-python (3.11 or newer) before this step, or set the python input"
command -v "$py" >/dev/null 2>&1 \
  || die "the python input names $py, which is no program on the PATH nor an executable file: name a Python 3.11 or newer (e.g. the one actions/setup-python installs), or leave the input out"
version=$("$py" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null) \
  || die "$py is not a Python (it could not run python -c): name a Python 3.11 or newer in the python input, or leave the input out"
"$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || die "agent-eval needs Python 3.11 or newer; $py is $version: use actions/setup-python or the python input"

venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/agent-eval-venv"
rm -rf "$venv"
"$py" -m venv "$venv"
if [ -x "$venv/bin/python" ]; then bin="$venv/bin"; else bin="$venv/Scripts"; fi
vpy="$bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1
if ! "$vpy" -m pip install --quiet --require-hashes --only-binary=:all: \
    -r "$root/requirements/action.txt" -r "$root/requirements/build.txt"; then
  runner=$("$vpy" -c 'import platform; print(f"Python {platform.python_version()} on {platform.system()} {platform.machine()}")')
  die "pip could not install the locked dependencies ($runner; pip's reason is above). A 'No matching distribution' means a locked version has no wheel for this runner: the lock has wheels for CPython 3.11 or newer on Linux x86_64 and arm64, macOS on Apple silicon and Windows x64 (cryptography, which PyGithub needs, has none for an Intel Mac or Windows on Arm): run the action on one of those, or the container action of this repository (without /python) on a Linux runner with Docker. Otherwise the package index could not be reached: re-run the job"
fi
"$vpy" -m pip install --quiet --no-deps --no-build-isolation --no-index "$root"
"$vpy" -m pip check
if [ -x "$bin/agent-eval" ]; then cmd="$bin/agent-eval"; else cmd="$bin/agent-eval.exe"; fi
"$cmd" --version
if [ -n "${GITHUB_ENV:-}" ]; then
  echo "AGENT_EVAL_BIN=$cmd" >> "$GITHUB_ENV"
fi
