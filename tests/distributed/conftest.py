"""Fixtures of the cluster tests: one LocalCluster of two spawned worker processes for the
package's tests, and small generated faces."""
import pytest

from jungleseg import distributed as jd
from jungleseg.datasets.faces import render_faces


@pytest.fixture(scope="package")
def client():
    with jd.connect(workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def faces():
    return render_faces(8, seed=0, size=(64, 80))
