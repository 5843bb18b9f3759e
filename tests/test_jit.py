"""The compile notice: said once, before a command's kernels compile, and not after."""
import subprocess
import sys

from jungleseg import _jit


def test_every_listed_kernel_exists_and_is_a_cached_numba_kernel():
    import importlib

    for command, kernels in _jit.KERNELS.items():
        assert command in _jit.COMPILE_SECONDS
        for module, name in kernels:
            kernel = getattr(importlib.import_module(module), name)
            assert kernel._cache is not None and kernel.targetoptions.get("cache") is not False


def test_the_notice_names_the_time_of_what_is_left_to_compile(monkeypatch):
    monkeypatch.setattr(_jit, "_compiled", lambda module, name: "_grow" not in module)
    assert _jit.to_compile("train", "segment") == ["train"]
    assert _jit.compile_notice("train", "segment") == (
        f"compiling kernels, first run only (about {_jit.COMPILE_SECONDS['train']} s) ...")
    monkeypatch.setattr(_jit, "_compiled", lambda module, name: True)
    assert _jit.compile_notice("train", "segment") is None


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
