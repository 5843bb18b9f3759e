"""Progress bars estimate the time left from the second item on: a first item that also
compiles kernels does not inflate the estimate."""
import io

from jungleseg._progress import progress_bar


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_first_item_is_left_out_of_the_rate():
    clock, out = Clock(), io.StringIO()
    bar = progress_bar(total=16, desc="training")
    bar.fp, bar._time = out, clock
    assert bar.format_dict["rate"] == 0  # nothing measured: shown as '?'
    clock.now = 120.0  # a first level that compiled for two minutes
    bar.update()
    assert bar.format_dict["rate"] == 0
    clock.now = 124.0  # then two levels of two seconds
    bar.update(2)
    assert bar.format_dict["rate"] == 0.5
    left = bar.format_dict["total"] - bar.n
    assert left / bar.format_dict["rate"] == 26.0  # not 13 x 41 s
    bar.close()


def test_a_disabled_bar_counts_without_a_clock():
    """--quiet: a disabled bar has no clock; describing it must not read one."""
    bar = progress_bar(total=3, disable=True)
    bar.update(3)
    assert bar.format_dict["total"] == 3  # it raised AttributeError (no clock) before
    bar.close()


def test_an_iterated_bar_yields_every_item():
    assert list(progress_bar(range(5), disable=True)) == list(range(5))
