"""The notebooks and the benchmark report, as a user meets them: every notebook in notebooks/ runs
fresh, top to bottom, in a Python 3 kernel, benchmarks/report.py turns results JSON into the
table and the plots, and the CPU benchmark's ceiling builds and runs. CPU tier (runs
everywhere); the `gpu` test checks that the PyTorch notebook really ran on the GPU where there
is one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Several jupyter_core 5.x releases warn (DeprecationWarning, an error under our filterwarnings)
# that the default data paths will move to platformdirs unless JUPYTER_PLATFORM_DIRS says which to
# use; opting in to the new paths is the documented fix, and newer releases (which no longer warn)
# use them too. It must be set before jupyter_core is first imported; kernels inherit it.
os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")

try:  # the notebook runner; the report's tests below run without it
    import nbclient
    import nbformat
except ImportError:
    nbclient = nbformat = None

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REPORT = ROOT / "benchmarks" / "report.py"
CELL_TIMEOUT_S = 300  # a cell is seconds on a 2-core CPU; this only catches a hang


def execute(path: Path, extra_code: str | None = None) -> nbformat.NotebookNode:
    """Run the notebook fresh (outputs cleared) with cwd = notebooks/; raises CellExecutionError
    naming the cell and its traceback if any cell fails."""
    if nbformat is None or nbclient is None:
        pytest.skip("the notebook runner is missing: the [test] extra installs nbformat and nbclient")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    if extra_code is not None:
        nb.cells.append(nbformat.v4.new_code_cell(extra_code))
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb


def text_of(cell: nbformat.NotebookNode) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif "data" in out:
            parts.append(out.data.get("text/plain", "") + out.data.get("text/markdown", ""))
    return "".join(parts)


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 3, f"expected at least three notebooks in notebooks/, found {NOTEBOOKS}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    nb = execute(path)
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.output_type == "error"]
    assert not errors, f"{path.name}: {errors[0].ename}: {errors[0].evalue}"
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells and all(c.execution_count is not None for c in code_cells), f"{path.name}: a cell did not run"


@pytest.mark.gpu
def test_pytorch_notebook_uses_the_gpu() -> None:
    """Where a GPU is usable (and torch sees it), the PyTorch notebook must run on it, not fall
    back to the CPU: its last line reports where its tensors lived. With two GPUs or more, its
    split section ran and matched the one-GPU result."""
    torch = pytest.importorskip("torch", reason="the PyTorch notebook's GPU path needs torch")
    assert torch.cuda.is_available(), "apsp sees a GPU but torch.cuda.is_available() is False"
    (path,) = [p for p in NOTEBOOKS if "pytorch" in p.stem]
    nb = execute(path, extra_code="print('RAN_ON', RAN_ON, 'SPLIT_EQUAL', SPLIT_EQUAL)")
    split = "True" if torch.cuda.device_count() >= 2 else "None"
    assert f"RAN_ON cuda SPLIT_EQUAL {split}" in text_of(nb.cells[-1])


def sample_results(folder: Path) -> None:
    """Two small results files in the documented schema (made-up numbers: this tests the report,
    not the speed), and one broken file that the report must skip and name."""
    def run(name: str, machine: dict, ceilings: list, rows: list, **extra) -> dict:
        return {"benchmark": name, "command": f"python benchmarks/{name}.py", "date": "2026-01-01T00:00:00Z",
                "machine": machine, "ceilings": ceilings, "results": rows, **extra}

    def row(impl: str, dtype: str, n: int, seconds: float, note: str | None = None) -> dict:
        return {"impl": impl, "dtype": dtype, "n": n, "seconds": seconds, "updates_per_s": n**3 / seconds,
                "fraction_of_ceiling": None, "note": note}

    gpu = {"cpu": "test CPU", "cores": 8, "gpu": "Test GPU", "driver": "1.0", "cuda": "1.0"}
    cpu = {"cpu": "test CPU", "cores": 2, "gpu": None, "driver": None, "cuda": None}
    gpu_rows = [row("apsp-gpu", "int32", 1000, 0.001, "checks off"), row("apsp-gpu", "int32", 1000, 0.0015, "checks on"),
                row("apsp-gpu", "int32", 2000, 0.004), row("torch-loop", "int32", 1000, 0.050),
                row("course-baseline", "int32", 1000, 0.002)]
    for r in gpu_rows:
        r["fraction_of_ceiling"] = r["updates_per_s"] / 4e12
    (folder / "gpu_test.json").write_text(json.dumps(run("bench_gpu", gpu, [
        {"name": "int32 microkernel", "dtype": "int32", "updates_per_s": 4e12}], gpu_rows,
        source="0123456789abcdef")))
    (folder / "cpu.json").write_text(json.dumps(run("bench_cpu", cpu, [], [
        row("apsp-cpu", "float64", 1000, 0.1), row("scipy", "float64", 1000, 1.0)])))
    (folder / "broken.json").write_text("{ not json")


def test_report_on_sample_results(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    sample_results(results)
    readme = tmp_path / "README.md"
    sys.path.insert(0, str(REPORT.parent))
    try:
        import report
    finally:
        sys.path.remove(str(REPORT.parent))
    readme.write_text(f"# x\n\n{report.README_BEGIN}\nold\n{report.README_END}\n\nafter\n")
    proc = subprocess.run([sys.executable, str(REPORT), "--results", str(results), "--readme", str(readme)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "broken.json" in proc.stderr

    table = (results / "report.md").read_text()
    # SciPy ran only on the CPU machine: the GPU row's comparison with it is marked as cross-machine.
    assert ("| apsp-gpu | int32 | 1000 | 1 ms | 1 T | 25.0% "
            "| 2× course-baseline, 50× torch-loop, 1,000× scipy (float64)† | Test GPU | checks off |") in table
    assert ("| apsp-gpu | int32 | 1000 | 1.5 ms | 667 G | 16.7% "
            "| 1.33× course-baseline, 33.3× torch-loop, 667× scipy (float64)† | Test GPU | checks on |") in table
    assert "| apsp-gpu | int32 | 2000 | 4 ms | 2 T | 50.0% |  | Test GPU |  |" in table  # no competitor at n=2000
    assert "| apsp-cpu | float64 | 1000 | 100 ms | 10 G |  | 10× scipy | test CPU (2 cores) |  |" in table
    assert "broken.json" in table
    assert "command: `python benchmarks/bench_gpu.py`; source digest `0123456789abcdef`" in table
    assert "command: `python benchmarks/bench_cpu.py`\n" in table  # a run without a digest
    for png in ("updates_vs_n.png", "updates_vs_n_by_dtype.png", "fraction_of_ceiling.png"):
        assert (results / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png

    text = readme.read_text()
    assert "old" not in text and text.endswith("after\n")
    # the summary keeps each series' largest n, compared where both were measured
    assert ("| apsp-gpu | int32 | 2000 | 4 ms | 2 T | 50.0% | 2× course-baseline (n=1000), "
            "50× torch-loop (n=1000), 1,000× scipy (float64, n=1000)† | Test GPU |") in text
    assert "| apsp-gpu | int32 | 1000 |" not in text
    assert "Not measured" not in text  # all five implementations are in the sample


def test_report_keeps_the_newest_run_of_a_command(tmp_path: Path) -> None:
    """A newer run of the same benchmark, options and machine replaces an older one whole: a row
    only the older run has (a plan the code no longer chooses) leaves the report. A run with other
    options (--quick) is another group and keeps its rows; --out / --tag do not make a group."""
    sample_results(tmp_path)
    base = json.loads((tmp_path / "gpu_test.json").read_text())

    def variant(name: str, date: str, command: str, rows: list) -> None:
        (tmp_path / name).write_text(json.dumps(dict(base, date=date, command=command, results=rows)))

    def row(impl: str, n: int, seconds: float, run: str) -> dict:
        return {"impl": impl, "dtype": "int32", "n": n, "seconds": seconds, "note": f"{impl} at {n}, {run} run"}

    cmd = "python benchmarks/bench_gpu.py --bin b --out {} --tag {}"
    variant("gpu_old.json", "2026-01-02T00:00:00Z", cmd.format("/o1", "old"),
            [row("apsp-gpu-twin", 1000, 0.003, "old"), row("apsp-gpu", 1000, 0.002, "old")])
    variant("gpu_new.json", "2026-01-03T00:00:00Z", cmd.format("/o2", "new"),
            [row("apsp-gpu", 1000, 0.0025, "new")])
    variant("gpu_quick.json", "2026-01-01T00:00:00Z", cmd.format("/o3", "quick") + " --quick",
            [row("apsp-gpu-pdl", 512, 0.0001, "quick")])
    proc = subprocess.run([sys.executable, str(REPORT), "--results", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    table = (tmp_path / "report.md").read_text()
    assert "old run" not in table and "| apsp-gpu-twin |" not in table
    assert "apsp-gpu at 1000, new run" in table and "apsp-gpu-pdl at 512, quick run" in table
    assert "so not tabulated: `gpu_old.json`, `gpu_test.json`." in table


def test_report_with_cpu_results_only(tmp_path: Path) -> None:
    """Only the CPU benchmark has run: the report plots it and says what is missing."""
    sample_results(tmp_path)
    (tmp_path / "gpu_test.json").unlink()
    proc = subprocess.run([sys.executable, str(REPORT), "--results", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    table = (tmp_path / "report.md").read_text()
    assert "No GPU results yet" in table
    assert "Not measured in these results: apsp-gpu" in table and "torch-loop" in table
    assert (tmp_path / "updates_vs_n.png").is_file() and not (tmp_path / "fraction_of_ceiling.png").exists()


def test_report_without_results(tmp_path: Path) -> None:
    """No results at all: the report says so, and draws no plot of nothing."""
    proc = subprocess.run([sys.executable, str(REPORT), "--results", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "No benchmark results yet" in (tmp_path / "report.md").read_text()
    assert not list(tmp_path.glob("*.png"))
    assert "no GPU results found" in proc.stdout


def test_cpu_ceiling_builds_and_measures_every_dtype() -> None:
    """bench_cpu.py's ceiling (benchmarks/ceiling_cpu.cpp) compiles with this machine's C++
    compiler against the engine's semiring header and reports a rate for each dtype it solves,
    and for the narrow solve's 16-bit lengths."""
    sys.path.insert(0, str(REPORT.parent))
    try:
        import bench_cpu
    finally:
        sys.path.remove(str(REPORT.parent))
    ceilings = bench_cpu.measure_ceilings()
    assert sorted(c["dtype"] for c in ceilings) == ["float32", "float64", "int32", "int64",
                                                     "narrow16"]
    for c in ceilings:
        step = "16-bit lengths" if c["dtype"] == "narrow16" else c["dtype"]
        assert c["name"].startswith("relax " + step), c
        assert 0 < c["updates_per_s"] < float("inf"), c


def test_committed_report_is_current(tmp_path: Path) -> None:
    """benchmarks/results/report.md and the README's results block are what report.py makes of
    the committed JSON: rerun `python benchmarks/report.py --readme` after adding results."""
    committed = ROOT / "benchmarks" / "results"
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text())
    proc = subprocess.run([sys.executable, str(REPORT), "--results", str(committed), "--out", str(tmp_path),
                           "--readme", str(readme)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    stale = "is stale: run `python benchmarks/report.py --readme` and commit what it writes"
    assert (tmp_path / "report.md").read_text() == (committed / "report.md").read_text(), f"report.md {stale}"
    assert readme.read_text() == (ROOT / "README.md").read_text(), f"README.md's results block {stale}"
