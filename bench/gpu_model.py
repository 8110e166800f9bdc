"""The GPU backend's cost model, run without a GPU: write a table through the GPU backend on the stand-in device
(every device step executed by its compiled CPU twin on NumPy arrays, every copy a NumPy copy) and report
what the write asked of the device and how much host work no GPU can remove.

    python bench/gpu_model.py --input IN.parquet --out OUT.parquet --compression snappy --json REPORT.json
    python bench/gpu_model.py --rows 2880404 --out /tmp/ss.parquet          # store_sales generated in memory
    python bench/gpu_model.py --input IN.parquet --device-input ...          # input placed on the device first
    python bench/gpu_model.py --rows 28804040 --block-size 134217728 --repeats 1 --out /tmp/ss.parquet

Reported (JSON and a table): rows, row_groups, input_bytes (the input's Arrow bytes), output_bytes, host_s
(wall time of the write minus the time inside stand-in kernels and stand-in copies: the host floor; host_cpu_s
the same in process CPU time, which a loaded machine does not inflate; staging_s / staging_cpu_s the part of it
spent copying the Arrow buffers into the upload staging buffer), standin_s,
launches, syncs (host waits on the device), h2d_bytes, d2h_bytes, per row group where it applies (launches and
syncs also as the most of any one row group, and which: max_launches_row_group, max_syncs_row_group and
per_row_group, counted from the traced events the counters come from: `row_group_counts`),
largest_row_group_input_bytes (the Arrow bytes of the largest row group's rows: the device's memory bound is
per row group, device_peak_over_row_group_input), and whether
OUT is byte-identical to `write_table(..., device="cpu")` with the same codec (the stand-in codec is the host
codec). The reported write is a warm one (after an untimed warm-up write): its staging buffer is the slab the
last write let go (`backends/device/copies.staging_block`; on a GPU the pinned buffer is kept the same way), so
the floor does not include allocating and first touching (pinning, on a GPU) it, which the first write of a
process pays. The counters are incremented in `gpuwrite/backends/device/ops.Device`, the one place that launches,
copies and syncs, so the model cannot miss one.

It also looks inside the launches (`gpuwrite/backends/device/cost.py`: every launch's geometry as on CUDA,
longest serial loop of one thread, bytes read and written): max_serial_steps and serial_step_kernel (the longest
sequential loop any thread runs, and the step it is in), device_peak_bytes (the high-water mark of device memory:
arrays held, the codec's scratch, CuPy's pool on CUDA; device_arrays_peak_bytes the arrays alone), and
modeled_device_s, an H200 estimate in total and per step (modeled_device_s_by_step):

    t(launch) = (bytes read + written) / (4.8 TB/s x 0.8 achievable) + serial steps x 300 ns + 4 us

(the constants and their reasons are in cost.py and docs/gpu.md). Host-device copies are not in it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import gpuwrite
from gpuwrite.backends.device import cost
from gpuwrite.backends.device.copies import trace_events
from gpuwrite.backends.device.ops import standin


def load(args: argparse.Namespace) -> pa.Table:
    """The input table: a Parquet file, or the store_sales table generated in memory."""
    if args.input:
        return pq.read_table(args.input)
    from gpuwrite.tools.demo_data import store_sales_table

    return store_sales_table(args.rows)


def model_write(table: pa.Table, out: Path, compression: str, device_input: bool = False,
                block_size: int | None = None) -> dict[str, Any]:
    """Write `table` through the GPU backend on the stand-in device (row groups of `block_size` bytes, the
    writer's default when None); the report."""
    with standin():
        data: Any = table
        if device_input:  # placed on the stand-in device once, untimed, and exported as pylibcudf exports
            from gpuwrite.integrations.device_export import DeviceExport

            data = DeviceExport(table)
        # a fresh path: renaming over an existing file makes ext4 flush it (auto_da_alloc), a file-system
        # cost of replacing a file that has nothing to do with the writer
        Path(out).unlink(missing_ok=True)
        sized = {} if block_size is None else {"block_size": block_size}
        with trace_events() as events:
            writer = gpuwrite.ParquetWriter(out, table.schema, device="gpu", compression=compression, **sized)
            start, start_cpu = time.perf_counter(), time.process_time()
            writer.write(data)
            result = writer.close()
            wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        del data  # the caller lets go of its (device) input: what stays is what the writer kept
    device = writer._backend.device  # type: ignore[attr-defined]
    counters = device.counters
    groups = len(result.footer.row_groups)
    group_input = largest_row_group_input(table, [rg.num_rows for rg in result.footer.row_groups])
    summary = counters.as_dict()
    per_group = row_group_counts(events, groups)
    assert [sum(g[k] for g in per_group) for k in ("launches", "syncs")] == [counters.launches, counters.syncs]
    report = {"rows": result.num_rows, "row_groups": groups, "input_bytes": table.nbytes,
              "output_bytes": result.size, "wall_s": wall, "host_s": wall - counters.standin_s,
              "host_cpu_s": cpu - counters.standin_cpu_s, "standin_cpu_s": counters.standin_cpu_s,
              "staging_s": counters.staging_s, "staging_cpu_s": counters.staging_cpu_s,
              "standin_s": counters.standin_s, "launches": counters.launches, "syncs": counters.syncs,
              "h2d_bytes": counters.h2d_bytes, "d2h_bytes": counters.d2h_bytes, "h2d_copies": counters.h2d_copies,
              "d2d_bytes": counters.d2d_bytes, "d2d_copies": counters.d2d_copies, "device_input": device_input,
              "d2h_copies": counters.d2h_copies, "launches_per_row_group": counters.launches / max(1, groups),
              "syncs_per_row_group": counters.syncs / max(1, groups), "per_row_group": per_group,
              **{f"max_{k}_row_group": max(((g[k], i) for i, g in enumerate(per_group)), default=(0, 0))
                 for k in ("launches", "syncs")},
              "h2d_over_input": counters.h2d_bytes / max(1, table.nbytes),
              "d2h_over_output": counters.d2h_bytes / max(1, result.size),
              "device_peak_bytes": counters.device_peak_bytes, "device_arrays_peak_bytes": device.peak_bytes,
              "device_peak_over_input": counters.device_peak_bytes / max(1, table.nbytes),
              "largest_row_group_input_bytes": group_input,
              "device_peak_over_row_group_input": counters.device_peak_bytes / max(1, group_input),
              "max_serial_steps": summary["max_serial_steps"], "serial_step_kernel": summary["serial_step_kernel"],
              "modeled_device_s": summary["modeled_device_s"],
              "modeled_device_s_by_step": summary["modeled_device_s_by_step"],
              "model": {"hbm_bytes_per_s": cost.HBM_BYTES_PER_S, "hbm_efficiency": cost.HBM_EFFICIENCY,
                        "step_s": cost.STEP_S, "launch_s": cost.LAUNCH_S},
              "by_kernel": counters.by_kernel, "waits": dict(counters.waits), "host_rss_after": rss_bytes()}
    return report


def row_group_counts(events: list[tuple[str, str]], groups: int) -> list[dict[str, int]]:
    """Launches and syncs of each row group from the traced events (`copies.trace_events`: every counted launch
    and host wait is one event): a row group's events start at its window's ("load", index) (a grown window loads
    again under the same index; events before the first load count to row group 0), except the wait for a row
    group's bytes, which is read back while the next one's kernels run: the wait just before ("write", index)
    counts to that row group."""
    per = [{"launches": 0, "syncs": 0} for _ in range(max(1, groups))]
    at = 0
    for j, (what, which) in enumerate(events):
        if what == "load":
            at = int(which)
        elif what == "launch":
            per[at]["launches"] += 1
        elif what == "wait":
            owner = events[j + 1] if j + 1 < len(events) else ("", "")
            per[int(owner[1]) if owner[0] == "write" else at]["syncs"] += 1
    return per


def largest_row_group_input(table: pa.Table, group_rows: list[int]) -> int:
    """The Arrow bytes of the rows of the largest row group (by bytes) of a file whose row groups hold
    `group_rows` rows of `table` in order."""
    largest, start = 0, 0
    for n in group_rows:
        largest = max(largest, table.slice(start, n).nbytes)
        start += n
    return largest


def rss_bytes() -> int:
    """This process's resident memory now (Linux `/proc/self/status` VmRSS), 0 where it cannot be read."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def identical_to_cpu(table: pa.Table, gpu_file: Path, compression: str, block_size: int | None = None) -> bool:
    """Whether the CPU path writes the same bytes for the same table, codec and row-group size."""
    with tempfile.TemporaryDirectory() as tmp:
        cpu_file = Path(tmp) / "cpu.parquet"
        sized = {} if block_size is None else {"block_size": block_size}
        gpuwrite.write_table(table, cpu_file, device="cpu", compression=compression, **sized)
        return cpu_file.read_bytes() == gpu_file.read_bytes()


def format_report(r: dict[str, Any]) -> str:
    """The report as a small table."""
    per_group = ", ".join(f"{g['launches']}/{g['syncs']}" for g in r["per_row_group"])
    lines = [f"{'rows':24s} {r['rows']:,}", f"{'row groups':24s} {r['row_groups']}",
             f"{'input (Arrow) bytes':24s} {r['input_bytes']:,}", f"{'output bytes':24s} {r['output_bytes']:,}",
             f"{'host floor (s)':24s} {r['host_s']:.3f} (CPU time: {r['host_cpu_s']:.3f})",
             f"{'  of it staging (s)':24s} {r.get('staging_s', 0):.3f} (CPU time: {r.get('staging_cpu_s', 0):.3f})",
             f"{'stand-in device (s)':24s} {r['standin_s']:.3f}",
             f"{'launches':24s} {r['launches']} ({r['launches_per_row_group']:.1f} per row group)",
             f"{'syncs':24s} {r['syncs']} ({r['syncs_per_row_group']:.1f} per row group)",
             f"{'most in a row group':24s} {r['max_launches_row_group'][0]} launches (row group "
             f"{r['max_launches_row_group'][1]}), {r['max_syncs_row_group'][0]} syncs (row group "
             f"{r['max_syncs_row_group'][1]})",
             f"{'per row group':24s} {per_group} (launches/syncs)",
             f"{'host waits by name':24s} {', '.join(f'{k} {v}' for k, v in r.get('waits', {}).items())}",
             f"{'H2D bytes':24s} {r['h2d_bytes']:,} ({r['h2d_over_input']:.3f}x the input)",
             f"{'D2H bytes':24s} {r['d2h_bytes']:,} ({r['d2h_over_output']:.3f}x the file)",
             f"{'D2D bytes (input)':24s} {r.get('d2d_bytes', 0):,} ({r.get('d2d_copies', 0)} copies)",
             f"{'device memory peak':24s} {r['device_peak_bytes']:,} ({r['device_peak_bytes'] / max(1, r['input_bytes']):.2f}x the input, "
             f"{r['device_peak_over_row_group_input']:.2f}x the largest row group's)",
             f"{'max serial steps':24s} {r['max_serial_steps']:,} (in {r['serial_step_kernel']})",
             f"{'modeled H200 device (s)':24s} {r['modeled_device_s']:.4f}",
             f"{'identical to CPU path':24s} {r.get('identical_to_cpu')}"]
    if r.get("host_rss_after_writes"):
        rss = ", ".join(f"{b / 2**20:,.0f}" for b in r["host_rss_after_writes"])
        lines.append(f"{'host RSS after writes':24s} {rss} MiB (in write order)")
    kernels = ", ".join(f"{k} {v}" for k, v in sorted(r["by_kernel"].items(), key=lambda kv: -kv[1]))
    modeled = ", ".join(f"{k} {v * 1e3:.2f}" for k, v in sorted(r["modeled_device_s_by_step"].items(),
                                                                key=lambda kv: -kv[1]))
    return "\n".join(lines + [f"{'launches by step':24s} {kernels}", f"{'modeled ms by step':24s} {modeled}"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", help="Parquet file to write again (default: store_sales generated in memory)")
    p.add_argument("--rows", type=int, default=2_880_404, help="rows of the generated store_sales table")
    p.add_argument("--out", required=True, help="where the GPU backend's file goes")
    p.add_argument("--compression", default="snappy")
    p.add_argument("--block-size", type=int, help="row-group size in bytes (parquet.block.size; default 128 MiB)")
    p.add_argument("--json", help="write the report here as JSON")
    p.add_argument("--device-input", action="store_true", help="place the input on the (stand-in) device first")
    p.add_argument("--repeats", type=int, default=3, help="writes; the report is the one with the median host_s")
    p.add_argument("--no-identity", action="store_true", help="skip the comparison with the CPU path")
    args = p.parse_args(argv)
    table = load(args)
    out = Path(args.out)
    model_write(table, out, args.compression, args.device_input, args.block_size)  # warm-up: kernels loaded
    in_order = [model_write(table, out, args.compression, args.device_input, args.block_size)
                for _ in range(args.repeats)]
    runs = sorted(in_order, key=lambda r: r["host_s"])
    report = runs[len(runs) // 2]
    report["host_rss_after_writes"] = [r["host_rss_after"] for r in in_order]  # in write order
    report["host_s_runs"] = [r["host_s"] for r in runs]
    report["host_cpu_s_runs"] = sorted(r["host_cpu_s"] for r in runs)
    report["host_cpu_s_median"] = report["host_cpu_s_runs"][len(runs) // 2]
    if not args.no_identity:
        report["identical_to_cpu"] = identical_to_cpu(table, out, args.compression, args.block_size)
    print(format_report(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0 if report.get("identical_to_cpu", True) else 1


if __name__ == "__main__":
    sys.exit(main())
