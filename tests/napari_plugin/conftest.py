"""Fixtures of the napari plugin's tests."""
import pytest

#: How long a test waits for the widget's worker: generous, as a loaded 2-core machine
#: running two test workers (``-n 2``) trains far slower than an idle one.
WORKER_SECONDS = 600


@pytest.fixture
def finish(qtbot):
    """``finish(widget)``: process Qt events until the widget's worker has finished and no
    live update is pending; fails the test, with the widget's status, after
    :data:`WORKER_SECONDS`."""
    from pytestqt.exceptions import TimeoutError as QtTimeout

    def wait(widget, seconds: float = WORKER_SECONDS) -> None:
        try:
            qtbot.waitUntil(lambda: widget._worker is None and not widget._timer.isActive(),
                            timeout=int(seconds * 1000))
        except QtTimeout:
            pytest.fail(f"the jungleseg worker did not finish within {seconds:.0f} s "
                        f"(status: {widget.status.value!r})")

    return wait
