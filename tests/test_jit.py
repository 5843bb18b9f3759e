"""The compile notice: said once, before a command's kernels compile, and not after."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from jungleseg import _jit


def test_every_listed_kernel_exists_and_is_a_cached_numba_kernel():
    import importlib

    for command, kernels in _jit.KERNELS.items():
        assert command in _jit.COMPILE_SECONDS
        for module, name in kernels:
            kernel = getattr(importlib.import_module(module), name)
            assert kernel._cache is not None and kernel.targetoptions.get("cache") is not False


def test_a_default_training_and_segmentation_call_every_listed_kernel(monkeypatch):
    """A listed kernel that a run does not call is never compiled by it, and the notice
    would then be said on every run ("first run only")."""
    import importlib

    from jungleseg import ColourFeatures, JungleSegmenter
    from jungleseg.datasets.faces import render_faces

    called = set()
    for kernels in _jit.KERNELS.values():
        for module, name in kernels:
            kernel = getattr(importlib.import_module(module), name)

            def counted(*args, _kernel=kernel, _key=(module, name)):
                called.add(_key)
                return _kernel(*args)

            monkeypatch.setattr(importlib.import_module(module), name, counted)
    images, labels = render_faces(2, seed=0, size=(32, 40))
    model = JungleSegmenter(ColourFeatures(max_offset=6), n_estimators=1, max_width=2,
                            max_depth=4, n_candidate_features=8, samples_per_image=300,
                            random_state=0).fit(images, labels)
    model.predict(images[0])
    assert called == {key for kernels in _jit.KERNELS.values() for key in kernels}


def test_the_notice_names_the_time_of_what_is_left_to_compile(monkeypatch):
    monkeypatch.setattr(_jit, "_compiled", lambda module, name: "_grow" not in module)
    assert _jit.to_compile("train", "segment") == ["train"]
    assert _jit.compile_notice("train", "segment") == (
        f"compiling kernels, first run only (about {_jit.COMPILE_SECONDS['train']} s) ...")
    monkeypatch.setattr(_jit, "_compiled", lambda module, name: True)
    assert _jit.compile_notice("train", "segment") is None


def test_the_estimates_match_the_measured_compile_times():
    """Each command's CPU seconds of compiling are those of the committed first-run
    figures (a cold run's CPU time less a warm one's), within a fifth, and the notice says
    them over the processes that compile."""
    import json
    from pathlib import Path

    results = Path(__file__).resolve().parents[1] / "benchmarks/results/first_run.json"
    figures = json.loads(results.read_text())["figures"]
    measured = {c: figures[f"{c}_cold"]["cpu"] - figures[f"{c}_warm"]["cpu"]
                for c in _jit.COMPILE_CPU_SECONDS if f"{c}_warm" in figures}
    assert "segment" in measured
    for command, cpu in measured.items():
        assert abs(_jit.COMPILE_CPU_SECONDS[command] - cpu) <= 0.2 * cpu, (command, cpu)
    if "train" not in measured:  # the whole cold training's CPU time bounds it from above
        assert _jit.COMPILE_CPU_SECONDS["train"] < figures["train_cold"]["cpu"]
    for command, cpu in _jit.COMPILE_CPU_SECONDS.items():
        share = min(_jit.COMPILE_PROCESSES[command], _jit._cores())
        assert _jit.COMPILE_SECONDS[command] == max(1, round(cpu / share))


def test_an_empty_kernel_cache_is_seen(tmp_path):
    """A fresh NUMBA_CACHE_DIR holds no compiled kernels, so segment must compile."""
    code = "from jungleseg import _jit; print(_jit.to_compile('segment'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"NUMBA_CACHE_DIR": str(tmp_path), "PATH": ""})
    assert out.stdout.strip() == "['segment']"


def test_compile_timer_counts_compiling_not_running():
    import numba

    @numba.njit
    def add_one(x):
        return x + 1

    with _jit.compile_timer() as first:
        add_one(1)
    with _jit.compile_timer() as again:
        add_one(2)
    assert first.seconds > 0 and again.seconds == 0


def test_the_kernels_compiled_ahead_have_the_types_training_calls_them_with(monkeypatch):
    """A training that merges, with nodes above the threshold subsample (256 entries),
    calls every kernel of _jit.AHEAD with the types listed there, and segmentation the
    kernel of _jit.SEGMENT_AHEAD, so the process compile_ahead starts compiles what
    training and segmentation load."""
    import numba

    from jungleseg import ColourFeatures, JungleSegmenter, segment
    from jungleseg.datasets.faces import render_faces

    stores = []
    monkeypatch.setattr(_jit, "compile_ahead",
                        lambda store, params, tabular=False: stores.append(store))
    monkeypatch.setattr("jungleseg.jungle._growth.compile_ahead", _jit.compile_ahead)
    images, labels = render_faces(2, seed=0, size=(32, 40))
    model = JungleSegmenter(ColourFeatures(max_offset=6, max_box=2), n_estimators=1,
                            max_width=2, max_depth=4, n_candidate_features=8,
                            samples_per_image=300, random_state=0).fit(images, labels)
    segment(model.jungle_, images[0], probabilities=False)
    assert len(stores) == 1
    assert stores[0][0].dtype == "uint8" and stores[0][6].dtype == "uint32"  # codes
    for key, spec in {**_jit.AHEAD, **_jit.SEGMENT_AHEAD}.items():
        types = _jit.argument_types(spec, numba.typeof(stores[0]))
        assert types in _jit._kernel(*key).signatures, key


def test_the_tabular_kernels_compiled_ahead_have_the_types_training_calls_them_with(
        monkeypatch):
    """A JungleClassifier training on bin codes that merges, with nodes above the
    threshold subsample, asks for the tabular kernels and calls every kernel of
    _jit.TABULAR_AHEAD with the types listed there."""
    import numba

    from jungleseg import JungleClassifier

    calls = []
    monkeypatch.setattr(_jit, "compile_ahead",
                        lambda store, params, tabular=False: calls.append((store, tabular)))
    monkeypatch.setattr("jungleseg.jungle._growth.compile_ahead", _jit.compile_ahead)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    JungleClassifier(2, max_width=4, random_state=0).fit(X, y)
    assert len(calls) == 1 and calls[0][1]
    for key, spec in _jit.TABULAR_AHEAD.items():
        types = _jit.argument_types(spec, numba.typeof(calls[0][0]))
        assert types in _jit._kernel(*key).signatures, key


@pytest.mark.slow
def test_compile_ahead_compiles_in_another_process(tmp_path):
    """With an empty cache, training starts a second process that writes the AHEAD
    kernels to the cache; the training process loads them rather than compiling."""
    code = """
import numba
from numba.core import event
from jungleseg import _jit, ColourFeatures, JungleSegmenter
from jungleseg.datasets.faces import render_faces
compiled = []
class Names(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev): pass
event.register("numba:compile", Names())
images, labels = render_faces(2, seed=0, size=(32, 40))
JungleSegmenter(ColourFeatures(max_offset=6, max_box=2), n_estimators=1, max_width=2,
                max_depth=4, n_candidate_features=8, samples_per_image=300,
                random_state=0).fit(images, labels)
print(sorted({name for _, name in _jit.AHEAD} & set(compiled)))
"""
    import os

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    assert out.stdout.strip() == "[]", out.stdout  # none compiled by the training process


def test_compile_ahead_starts_nothing_when_compiled_or_turned_off(monkeypatch):
    from jungleseg.jungle._grow import GrowParams

    params = GrowParams(n_classes=2, max_width=4, max_depth=6)
    monkeypatch.setattr(_jit, "_compiled", lambda module, name: True)
    assert _jit.compile_ahead((), params) is None
    monkeypatch.setattr(_jit, "_compiled", lambda module, name: False)
    monkeypatch.setenv("JUNGLESEG_COMPILE_AHEAD", "0")
    assert _jit.compile_ahead((), params) is None


def test_trainings_in_one_process_share_the_process_compiling_ahead(monkeypatch):
    """A training while an earlier one's compiling process still runs gets that process
    back rather than start another (a napari session trains at every stroke); once it
    has ended, the next training starts a new one."""
    from jungleseg.jungle._grow import GrowParams

    started = []

    def start(self, todo, lower):
        started.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        return started[-1]

    monkeypatch.setattr(_jit._Ahead, "_start", start)
    monkeypatch.setattr(_jit, "_RUNNING", {})
    monkeypatch.setattr(_jit, "_compiled", lambda module, name: False)
    params = GrowParams(n_classes=2, max_width=4, max_depth=6)
    try:
        first = _jit.compile_ahead((), params)
        assert _jit.compile_ahead((), params) is first and len(started) == 1
        _jit._kill(first.process)
        assert _jit.compile_ahead((), params) is not first and len(started) == 2
    finally:
        for process in started:
            _jit._kill(process)


def test_a_kernel_waits_for_the_other_process_then_compiles_as_usual(tmp_path):
    import numba

    @numba.njit
    def twice(x):
        return 2 * x

    marker = tmp_path / "0.done"
    waiter = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5); "
                               f"open({str(marker)!r}, 'w').close(); time.sleep(60)"])
    try:
        _jit._wait_then_compile(twice, marker, waiter)
        assert twice(3) == 6 and marker.exists()  # it waited for the marker
        assert "_compile_for_args" not in twice.__dict__  # later types compile at once
        assert twice(1.5) == 3.0
    finally:
        waiter.kill()
        waiter.wait()




def test_the_process_compiling_ahead_lowers_its_priority_only_when_asked(tmp_path):
    code = f"""
import os
from jungleseg import _jit
before = os.nice(0)
_jit._compile_kernels([(0, _jit._LEVEL_SEARCH)], None, {str(tmp_path)!r}, lower=False)
print(os.nice(0) - before, os.path.exists({str(tmp_path / "0.done")!r}))
_jit._compile_kernels([(1, _jit._LEVEL_SEARCH)], None, {str(tmp_path)!r})
print(os.nice(0) - before, os.path.exists({str(tmp_path / "1.done")!r}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["0", "True", str(_jit.LOWERED), "True"], out.stdout


def _fake_ahead(monkeypatch, tmp_path, lowered: str, promoted: str):
    """An _Ahead of one lowered kernel whose processes run ``lowered`` first and
    ``promoted`` after a promotion (Python code, ``MARKER`` the kernel's marker)."""
    marker = tmp_path / "0.done"

    def start(self, todo, lower):
        code = (lowered if lower else promoted).replace("MARKER", repr(str(marker)))
        return subprocess.Popen([sys.executable, "-c", code])

    monkeypatch.setattr(_jit._Ahead, "_start", start)
    return _jit._Ahead([_jit._LEVEL_SEARCH], None, str(tmp_path)), marker


def test_training_does_not_wait_for_a_starved_lowered_process(monkeypatch, tmp_path):
    """A lowered process that gets no CPU is replaced by one at training's priority,
    which the kernel's first call then waits for."""
    import numba

    @numba.njit
    def twice(x):
        return 2 * x

    ahead, marker = _fake_ahead(monkeypatch, tmp_path, "import time; time.sleep(120)",
                                "open(MARKER, 'w').close()")
    monkeypatch.setattr(_jit, "_cpu_seconds", lambda pid: 0.0)  # no CPU: a busy machine
    old = ahead.process
    try:
        _jit._wait_then_compile(twice, marker, ahead, 0)
        start = time.monotonic()
        assert twice(3) == 6 and marker.exists()
        assert time.monotonic() - start < 30  # not the sleeper's 120 s
        assert old.poll() is not None and not ahead.lowered(0)  # replaced, and killed
    finally:
        _jit._stop(ahead, tmp_path / "gone")
        _jit._kill(old)


def test_training_waits_for_a_lowered_process_that_gets_cpu(monkeypatch, tmp_path):
    """A lowered process that runs (an idle machine gives it a core) is waited for."""
    import numba

    @numba.njit
    def thrice(x):
        return 3 * x

    busy = ("import time\nstart = time.monotonic()\n"
            "while time.monotonic() - start < 3: pass\nopen(MARKER, 'w').close()\n"
            "time.sleep(120)")
    ahead, marker = _fake_ahead(monkeypatch, tmp_path, busy, "import time; time.sleep(120)")
    monkeypatch.setattr(_jit, "_cpu_seconds", lambda pid: time.monotonic())  # a whole core
    old = ahead.process
    try:
        _jit._wait_then_compile(thrice, marker, ahead, 0)
        assert thrice(2) == 6 and marker.exists()
        assert ahead.process is old and ahead.lowered(0)  # waited for, not replaced
    finally:
        _jit._stop(ahead, tmp_path / "gone")


def test_cpu_seconds_of_a_process():
    before = _jit._cpu_seconds(os.getpid())
    start = time.process_time()
    while time.process_time() - start < 0.3:
        pass
    assert _jit._cpu_seconds(os.getpid()) - before >= 0.2
    assert _jit._cpu_seconds(2**22 + 7) is None  # no such process


def test_a_kernel_counts_as_lowered_once_the_process_has_reached_it(monkeypatch, tmp_path):
    monkeypatch.setattr(_jit._Ahead, "_start", lambda self, todo, lower: None)
    first = next(iter(_jit.AHEAD))
    ahead = _jit._Ahead([first, _jit._LEVEL_SEARCH], None, str(tmp_path))
    assert not ahead.lowered(0) and not ahead.lowered(1)  # still on the first, at full priority
    (tmp_path / "0.done").touch()
    assert ahead.lowered(1) and not ahead.lowered(0)


def test_a_process_for_the_lowered_kernel_alone_is_lowered_before_it_imports(tmp_path):
    """When the level search is all there is to compile ahead, the process runs at the
    lowered priority from its start: importing Numba (about half a second of CPU) does not
    compete with training either."""
    ahead = _jit._Ahead([_jit._LEVEL_SEARCH], None, str(tmp_path))
    pid = ahead.process.pid
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(f"/proc/{pid}/stat") as handle:
                nice = int(handle.read().rpartition(")")[2].split()[16])
            if nice:
                break
            time.sleep(0.002)
        assert nice == _jit.LOWERED
        assert _jit._cpu_seconds(pid) < 0.15  # before its imports (Numba: about 0.4 s)
    finally:
        _jit._stop(ahead, tmp_path)
