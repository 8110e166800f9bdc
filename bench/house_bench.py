"""How heavy the package is to import and how far one write's data walks: the numbers the house issue tracks.

- modules directly under `gpuwrite/`;
- modules `import gpuwrite` loads (all, gpuwrite's own, and of those gpuwrite.spark's), in a fresh process;
- `python -X importtime -c "import gpuwrite"`: gpuwrite's cumulative import time, median of --runs processes;
- the walk of `write_table`'s data: every gpuwrite function that receives the caller's object, or rows a
  function on the walk made from it (Arrow pieces, iterators of them, windows, leaf data), in call order. A stop is a change of module, a
  room is the package a module lives in (`gpuwrite.<room>`; modules directly under gpuwrite/ share the room
  "gpuwrite"), a climb is a stop into a room earlier in the flow order (api -> input -> options -> pipeline ->
  backends -> encode -> kernels -> assemble -> format), a return is a stop into a room already left.

    .venv/bin/python bench/house_bench.py            # run from a checkout: measures that checkout
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FLOW = ("gpuwrite", "integrations", "options", "pipeline", "backends", "encode", "kernels", "assemble", "format")

_LOADED = """
import sys
before = set(sys.modules)
import gpuwrite
new = set(sys.modules) - before
own = [m for m in new if m == "gpuwrite" or m.startswith("gpuwrite.")]
print(len(new), len(own), len([m for m in own if m.startswith("gpuwrite.spark")]))
"""

_WALK = r"""
import sys, json, types
import pyarrow as pa
import gpuwrite
table = pa.table({"a": list(range(1000)), "s": [str(i % 7) for i in range(1000)]})
gpuwrite.write_table(table, sys.argv[1] + "/warm.parquet")  # kernels loaded, threads started
tracked = {id(table): table}
frames = {}
walk = []

def carries(frame):
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return any(id(frame.f_locals.get(n)) in tracked for n in names)

def profile(frame, event, arg):
    module = frame.f_globals.get("__name__", "")
    if not module.startswith("gpuwrite"):
        return
    if event == "call" and (carries(frame) or id(frame) in frames):
        frames[id(frame)] = True
        walk.append((module, frame.f_code.co_name))
    elif event == "return" and id(frame) in frames and is_data(arg):
        tracked[id(arg)] = arg

def is_data(obj):
    # rows of the input in any form: Arrow pieces, iterators of them, windows and leaf data
    return isinstance(obj, (pa.Table, pa.RecordBatch, pa.Array, pa.ChunkedArray, types.GeneratorType)) or (
        hasattr(obj, "num_rows") and not isinstance(obj, type))

sys.setprofile(profile)
gpuwrite.write_table(table, sys.argv[1] + "/x.parquet")
sys.setprofile(None)
print(json.dumps(walk))
"""


def room(module: str) -> str:
    """The package of a module: gpuwrite.<room>.…, or "gpuwrite" for a module directly under gpuwrite/."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else "gpuwrite"


def walk_summary(walk: list[list[str]]) -> dict[str, Any]:
    """Stops (changes of module), rooms, climbs and returns of a walk of (module, function) calls."""
    stops: list[str] = []
    for module, _ in walk:
        if not stops or stops[-1] != module:
            stops.append(module)
    rooms = [room(m) for m in stops]
    left: set[str] = set()
    climbs = returns = 0
    entered = [rooms[0]] if rooms else []
    for prev, cur in zip(rooms, rooms[1:], strict=False):
        if cur == prev:
            continue
        left.add(prev)
        if cur in FLOW and prev in FLOW and FLOW.index(cur) < FLOW.index(prev):
            climbs += 1
        if cur in left:
            returns += 1
        entered.append(cur)
    return {"stops": len(stops), "rooms": len(set(rooms)), "climbs": climbs, "returns": returns,
            "path": " > ".join(entered)}


def run(code: str, *args: str) -> str:
    """stdout of `code` in a fresh interpreter with this checkout first on the path."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True,
                          env=env, cwd=REPO).stdout


def import_time_us() -> int:
    """gpuwrite's cumulative import time in microseconds, from -X importtime."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import gpuwrite"], capture_output=True,
                         text=True, check=True, env=env, cwd=REPO).stderr
    line = next(x for x in err.splitlines() if x.rstrip().endswith("| gpuwrite"))
    return int(line.split("|")[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes for the import time (median)")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    import tempfile

    loaded = [int(x) for x in run(_LOADED).split()]
    with tempfile.TemporaryDirectory() as tmp:
        walk = json.loads(run(_WALK, tmp).strip().splitlines()[-1])
    figures = {
        "root_modules": len([p for p in (REPO / "gpuwrite").glob("*.py")]),
        "import_modules": loaded[0], "import_gpuwrite_modules": loaded[1], "import_spark_modules": loaded[2],
        "import_time_ms": statistics.median(import_time_us() for _ in range(args.runs)) / 1000,
        "walk": walk_summary(walk),
    }
    print(json.dumps(figures, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
