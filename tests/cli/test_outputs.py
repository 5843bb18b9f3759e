"""Output paths checked before the work, and a trained model that is never dropped."""
import numpy as np
import pytest

from jungleseg import ColourFeatures, JungleSegmenter, load_model
from jungleseg.cli._outputs import save_or_rescue, writable_file, writable_folder
from jungleseg.datasets.faces import render_faces


def test_writable_file(tmp_path):
    assert writable_file(tmp_path / "m.h5", "--out") == tmp_path / "m.h5"
    with pytest.raises(ValueError, match="is a folder; --out needs a file name"):
        writable_file(tmp_path, "--out")
    assert writable_file(tmp_path / "missing" / "m.h5", "--out").parent.is_dir()  # made
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ValueError, match="a_file: is a file; --out needs a folder there"):
        writable_file(tmp_path / "a_file" / "sub" / "m.h5", "--out")
    (tmp_path / "labels.zarr").mkdir()  # a zarr output is a folder, replaced
    assert writable_file(tmp_path / "labels.zarr", "--out") == tmp_path / "labels.zarr"


def test_writable_folder(tmp_path):
    assert writable_folder(tmp_path / "new" / "sub", "--out").is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file; --out needs a folder"):
        writable_folder(tmp_path / "file", "--out")


def test_save_or_rescue_saves_elsewhere_when_the_target_fails(tmp_path, monkeypatch):
    images, labels = render_faces(2, seed=0, size=(32, 32))
    jungle = JungleSegmenter(ColourFeatures(max_offset=4), n_estimators=1, max_depth=3,
                             samples_per_image=100, random_state=0).fit(images, labels).jungle_
    assert save_or_rescue(jungle, tmp_path / "m.h5") == tmp_path / "m.h5"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError, match="saved to .*rescued"):
        save_or_rescue(jungle, tmp_path / "missing" / "m.h5")  # no folder: not writable
    rescued = list(tmp_path.glob("m.rescued-*.h5"))
    assert len(rescued) == 1
    assert np.array_equal(load_model(rescued[0]).dags[0].left, jungle.dags[0].left)


def test_messages_start_on_a_line_of_their_own(capsys, monkeypatch):
    import io
    import sys

    from jungleseg.cli._outputs import LineTracker, error, warn

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", LineTracker(stream))
    sys.stderr.write("bar  50%|#####     | 1/2\r")  # as tqdm leaves a line
    error("bad file")
    warn("a note")
    assert stream.getvalue().split("\n")[1:3] == ["jungleseg: error: bad file",
                                                   "jungleseg: warning: a note"]
