"""Width schedules: the maximum number of nodes at each level of a DAG.

The root level D = 0 has one node. A level can never hold more than twice the number
of split nodes of the level above, whatever the schedule allows.
"""
import numpy as np

SCHEDULES = ("doubling", "kinect")


def level_width(schedule: str, max_width: int | None, depth: int) -> int:
    """Width allowed at level ``depth``; ``max_width=None`` means unlimited whatever the
    schedule: every level may double, and the DAG is a tree.

    - ``doubling``: ``min(M, 2^D)`` (the paper's Faces and Stanford schedule);
    - ``kinect``: ``min(M, floor(2^min(5, D) * 1.2^max(0, D - 5)))``: a full tree to depth
      5, then 20 % wider per level.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if depth == 0:
        return 1
    if max_width is None:
        return 2 ** min(depth, 62)
    if schedule == "kinect":
        width = int(2 ** min(5, depth) * 1.2 ** max(0, depth - 5))
    else:
        width = 2 ** min(depth, 62)
    return min(int(max_width), width)


def level_widths(schedule: str, max_width: int | None, max_depth: int) -> np.ndarray:
    """Widths of levels 0..max_depth."""
    return np.array([level_width(schedule, max_width, d) for d in range(max_depth + 1)], np.int64)
