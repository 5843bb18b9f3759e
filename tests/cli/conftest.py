"""A small model of synthetic faces, trained once for the command line's tests."""
import pytest

from .test_commands import FAST, REPO, run


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    """(folder, generated faces folder, model file) of a faces model trained through the
    command line in a subprocess."""
    folder = tmp_path_factory.mktemp("cli")
    data = folder / "faces"
    run("generate", "faces", "--n", 6, "--size", "48x64", "--out", data, "--seed", 3)
    model = folder / "model.h5"
    run("train", REPO / "configs/faces.yaml", "--data", data, "--out", model, *FAST,
        process=True)
    return folder, data, model
