# Sourced by bin/askgate and bin/test: create .venv on first use and keep it in step with pyproject.toml.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.askgate-installed"
EXTRAS="${ASKGATE_EXTRAS:-}"

ensure_venv() {
  if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check uv >&2
  fi
  local uv_cmd="uv"
  command -v uv >/dev/null 2>&1 || uv_cmd="python3 -m uv"
  if [ ! -x "$VENV/bin/python" ]; then
    $uv_cmd venv --quiet --python python3 "$VENV" >&2
  fi
  local want="$(sha256sum "$ROOT/pyproject.toml" | cut -c1-16)-${EXTRAS}"
  if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
    local spec="$ROOT"
    [ -n "$EXTRAS" ] && spec="$ROOT[$EXTRAS]"
    $uv_cmd pip install --quiet --python "$VENV/bin/python" -e "$spec" >&2
    echo "$want" > "$STAMP"
  fi
}
