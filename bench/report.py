"""Turn write_bench.py results (JSON) into a markdown table and a bar chart (PNG), and put them in READMEs.

    python bench/report.py bench/results/write_bench.json --markdown bench/results/write_bench.md \
        --plot bench/results/write_bench.png --readme README.md --readme bench/README.md

Each input is one run as write_bench.py saves it ({"rows", "codec", "results": [...], "machine": {...}}), a
list of runs, or {"runs": [...]}: several runs (sizes, codecs, core counts) make one table and one chart
with a group of bars per run. The text states the machine and library versions, and names every run where
another writer beats gpuwrite. A README gets the table and the chart between the lines
`<!-- bench-report:start -->` and `<!-- bench-report:end -->` (the image path relative to that README).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

START, END = "<!-- bench-report:start -->", "<!-- bench-report:end -->"
SUBJECT = "gpuwrite"


def load_runs(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Every run in the given JSON files, in order."""
    runs: list[dict[str, Any]] = []
    for path in paths:
        data = json.loads(Path(path).read_text())
        if isinstance(data, dict) and "runs" in data:
            data = data["runs"]
        runs.extend(data if isinstance(data, list) else [data])
    for run in runs:
        if not isinstance(run, dict) or not isinstance(run.get("results"), list):
            raise ValueError("a run needs a 'results' list (write_bench.py's JSON)")
    return runs


def run_label(run: dict[str, Any]) -> str:
    """What a run measured: table, rows, codec and cores, e.g. 'store_sales: 2,880,404 rows, snappy, 16 cores'."""
    parts = []
    if isinstance(run.get("rows"), int):
        parts.append(f"{run['rows']:,} rows")
    if run.get("codec"):
        parts.append(str(run["codec"]))
    cores = run.get("threads") or (run.get("machine") or {}).get("usable_cpus")
    if cores:
        parts.append(f"{cores} cores")
    text = ", ".join(parts) or "run"
    return f"{run['dataset']}: {text}" if run.get("dataset") else text


def machine_line(runs: list[dict[str, Any]]) -> str:
    """The machine and library versions, from the first run that records them."""
    machine: dict[str, Any] = next((r["machine"] for r in runs if isinstance(r.get("machine"), dict)), {})
    if not machine:
        return "Machine not recorded."
    cpu = machine.get("cpu_model") or "unknown CPU"
    cores = f"{machine.get('usable_cpus')} of {machine.get('cpu_count')} cores usable"
    versions = ", ".join(f"{k} {v}" for k, v in (machine.get("versions") or {}).items() if v)
    load = machine.get("load_average_1m")
    busy = f" (shared: 1-minute load average {load:.1f} at the start)" if isinstance(load, (int, float)) else ""
    return f"Measured on {cpu} ({cores}){busy}, {machine.get('platform', '?')}, " \
           f"Python {machine.get('python', '?')}; {versions}."


def markdown(runs: list[dict[str, Any]], image: str | None = None) -> str:
    """The results as a markdown table, the machine, where others beat gpuwrite, and the chart."""
    lines = [machine_line(runs), "",
             "| data | writer | median s | GB/s | file MB | speed vs pyarrow | size vs pyarrow | CPU s |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    faster: list[str] = []
    for run in runs:
        label = run_label(run)
        ours = next((r for r in run["results"] if r.get("writer") == SUBJECT and "median_s" in r), None)
        for r in run["results"]:
            name = f"**{r['writer']}**" if r.get("writer") == SUBJECT else str(r.get("writer"))
            if "median_s" not in r:
                lines.append(f"| {label} | {name} | error: {str(r.get('error', 'no samples')).replace('|', '/')} "
                             "| | | | | |")
                continue
            lines.append(f"| {label} | {name} | {r['median_s']:.3f} | {r['gb_per_s']:.3f} | "
                         f"{r['size_bytes'] / 1e6:.1f} | {_ratio(r.get('speed_vs_pyarrow'))} | "
                         f"{_ratio(r.get('size_vs_pyarrow'))} | {_seconds(r.get('median_cpu_s'))} |")
            if ours is not None and r is not ours and r["median_s"] < ours["median_s"]:
                faster.append(f"{r['writer']} ({ours['median_s'] / r['median_s']:.2f}x) at {label}")
    lines.append("")
    if any("median_cpu_s" in r for run in runs for r in run["results"]):
        lines.extend(["CPU s: median CPU-seconds of the writing process, all its threads (Spark's JVM is another "
                      "process and is not counted). On a busy shared machine wall time favours the writers with "
                      "more threads; CPU-seconds are the steadier comparison.", ""])
    if faster:
        lines.append(f"Faster than gpuwrite here: {'; '.join(faster)}.")
    else:
        lines.append("No other writer was faster than gpuwrite in these runs.")
    if image:
        lines.extend(["", f"![Parquet write speed and file size relative to pyarrow]({image})"])
    return "\n".join(lines) + "\n"


def _seconds(value: Any) -> str:
    """CPU seconds as '1.234', or '-' when not recorded."""
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"


def _ratio(value: Any) -> str:
    """A ratio as '1.37x', or '-'."""
    return f"{value:.2f}x" if isinstance(value, (int, float)) else "-"


def plot(runs: list[dict[str, Any]], path: Path) -> None:
    """Bar charts saved as one PNG, a group of bars per run: speed relative to pyarrow (each bar labelled with
    its GB/s; plain GB/s when no run has pyarrow) and, beside it, file size relative to pyarrow's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    writers = list(dict.fromkeys(r["writer"] for run in runs for r in run["results"]))
    relative = any(isinstance(r.get("speed_vs_pyarrow"), (int, float)) for run in runs for r in run["results"])
    metric = "speed_vs_pyarrow" if relative else "gb_per_s"
    height = 0.8 / max(1, len(writers))
    fig, (speed_ax, size_ax) = plt.subplots(1, 2, figsize=(12, 1.4 + 0.4 * len(runs) * len(writers)),
                                            sharey=True, gridspec_kw={"width_ratios": [3, 2]})
    for j, writer in enumerate(writers):
        speeds: list[tuple[float, float, float]] = []
        sizes: list[tuple[float, float]] = []
        for i, run in enumerate(runs):
            row = next((r for r in run["results"] if r["writer"] == writer and "gb_per_s" in r), None)
            if row is None:
                continue
            if isinstance(row.get(metric), (int, float)):
                speeds.append((i + j * height, row[metric], row["gb_per_s"]))
            if isinstance(row.get("size_vs_pyarrow"), (int, float)):
                sizes.append((i + j * height, row["size_vs_pyarrow"]))
        style = {"height": height, "edgecolor": "black" if writer == SUBJECT else None, "color": f"C{j}"}
        if speeds:
            bars = speed_ax.barh([p for p, _, _ in speeds], [v for _, v, _ in speeds], label=writer, **style)
            labels = [f"{v:.2f}x  ({g:.3g} GB/s)" if relative else f"{g:.3g}" for _, v, g in speeds]
            speed_ax.bar_label(bars, labels=labels, padding=2, fontsize=7)
        if sizes:
            bars = size_ax.barh([p for p, _ in sizes], [v for _, v in sizes], **style)
            size_ax.bar_label(bars, fmt="%.2f", padding=2, fontsize=7)
    speed_ax.set_yticks([i + height * (len(writers) - 1) / 2 for i in range(len(runs))],
                        [run_label(r).replace(": ", ":\n", 1) for r in runs], fontsize=8)
    speed_ax.invert_yaxis()
    if relative:
        speed_ax.axvline(1.0, color="grey", linewidth=0.8)
        speed_ax.set_xlabel("write speed / pyarrow's (higher is faster); labels: GB/s of Arrow input")
    else:
        speed_ax.set_xlabel("GB/s of Arrow input (higher is faster)")
    speed_ax.set_xlim(right=speed_ax.get_xlim()[1] * 1.25)
    speed_ax.set_title("Parquet write speed")
    speed_ax.legend(loc="lower right", fontsize=8)
    size_ax.axvline(1.0, color="grey", linewidth=0.8)
    size_ax.set_xlim(right=size_ax.get_xlim()[1] * 1.1)
    size_ax.set_xlabel("file size / pyarrow's (lower is smaller)")
    size_ax.set_title("File size")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def embed(readme: Path, block: str) -> None:
    """Replace the text between the start and end markers of `readme` with `block`."""
    text = readme.read_text()
    # the markers count only on lines of their own: prose may name them
    found = re.search(rf"^{re.escape(START)}$(.*?)^{re.escape(END)}$", text, re.MULTILINE | re.DOTALL)
    if found is None:
        raise ValueError(f"{readme} has no {START} ... {END} section (each marker on a line of its own)")
    readme.write_text(f"{text[:found.start()]}{START}\n{block}{END}{text[found.end():]}")


def main(argv: list[str] | None = None) -> int:
    """Read the runs, then write the markdown, the chart and the README sections asked for."""
    parser = argparse.ArgumentParser(description="Markdown table and PNG chart from write_bench.py results.")
    parser.add_argument("results", nargs="+", type=Path, help="write_bench.py JSON file(s)")
    parser.add_argument("--markdown", type=Path, help="write the table here (default: print it)")
    parser.add_argument("--plot", type=Path, help="write the bar chart here (PNG)")
    parser.add_argument("--readme", type=Path, action="append", default=[],
                        help="put the table and chart between the bench-report markers of this file (repeatable)")
    args = parser.parse_args(argv)
    runs = load_runs(args.results)
    if args.plot:
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        plot(runs, args.plot)
    here = args.markdown.parent if args.markdown else Path.cwd()
    image = os.path.relpath(args.plot, here) if args.plot else None
    text = markdown(runs, image)
    if args.markdown:
        args.markdown.write_text(text)
    else:
        print(text, end="")
    for readme in args.readme:
        embed(readme, markdown(runs, os.path.relpath(args.plot, readme.parent) if args.plot else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
