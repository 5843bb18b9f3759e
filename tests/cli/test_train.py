"""``jungleseg train``: several ``--set`` pairs at once, a model name without ``.h5``
warned about, and missing output folders created."""
import json

from jungleseg.cli._parser import build_parser

from .test_commands import run
from .test_workflows import TINY, own_folders


def test_set_takes_several_pairs_and_repeats():
    args = build_parser().parse_args(["train", "c.yaml", "--out", "m.h5", "--set", "a=1",
                                      "b=2", "--set", "c=3"])
    assert args.set == ["a=1", "b=2", "c=3"]


def test_a_model_without_h5_is_warned_about_and_folders_are_made(tmp_path):
    data = own_folders(tmp_path / "mine", n=3)
    out = tmp_path / "new" / "folder" / "model.bin"
    proc = run("train", "stanford", "--data", data, "--out", out, *TINY,
               "jungle.max_depth=3", "seed=4")
    assert out.is_file()
    assert proc.stderr.startswith("jungleseg: warning: --out ") and ".h5" in proc.stderr
    info = json.loads(run("info", out, "--json").stdout)
    assert info["depth"] <= 3 and info["training"]["random_state"] == 4
