"""Names packages give on first use: the estimators load only when asked for."""
import subprocess
import sys

import pytest

from jungleseg._lazy import lazy_attributes


def test_a_lazy_name_is_imported_when_asked_and_others_are_refused():
    getattr_ = lazy_attributes("jungleseg", {"JungleClassifier": ".jungle"})
    from jungleseg.jungle._classes import JungleClassifier

    assert getattr_("JungleClassifier") is JungleClassifier
    with pytest.raises(AttributeError, match="'jungleseg' has no attribute 'nothing'"):
        getattr_("nothing")


def test_importing_the_package_loads_no_estimator_and_no_scikit_learn():
    code = ("import sys, jungleseg, jungleseg.jungle, jungleseg.segmentation\n"
            "assert 'sklearn' not in sys.modules\n"
            "assert 'jungleseg.jungle._classes' not in sys.modules\n"
            "from jungleseg import JungleClassifier, JungleSegmenter\n"
            "from jungleseg.jungle import grow\n"
            "assert 'sklearn' in sys.modules and grow.__module__ == 'jungleseg.jungle._growth'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
