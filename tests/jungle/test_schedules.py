"""Width schedules: the paper's node counts, the Kinect schedule, unlimited widths."""
import numpy as np
import pytest

from jungleseg import level_width, level_widths


@pytest.mark.parametrize("nodes", [2047, 5631, 10239, 20223, 30207, 40191])
def test_paper_faces_node_counts(nodes):
    # with min(256, 2^D), a DAG of depth D_max >= 8 has 511 + 256 (D_max - 8) nodes: the
    # paper's Faces table lists exactly these counts
    d_max = (nodes - 511) // 256 + 8
    assert level_widths("doubling", 256, d_max).sum() == nodes


def test_kinect_schedule():
    widths = level_widths("kinect", 10_000, 8)
    np.testing.assert_array_equal(widths, [1, 2, 4, 8, 16, 32, 38, 46, 55])
    assert level_width("kinect", 40, 7) == 40


def test_unlimited_is_a_tree_and_doubling_is_capped():
    for schedule in ("doubling", "kinect"):
        np.testing.assert_array_equal(level_widths(schedule, None, 8), 2 ** np.arange(9))
    np.testing.assert_array_equal(level_widths("doubling", 4, 4), [1, 2, 4, 4, 4])


def test_unknown_schedule_is_named():
    for name in ("linear", "constant"):
        with pytest.raises(ValueError, match="schedule"):
            level_width(name, 4, 3)
