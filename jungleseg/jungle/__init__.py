"""The jungle itself: DAGs as flat arrays, split criteria, width schedules, level
growth with LSearch, traversal, the trained model and the tabular estimator.

- :mod:`._dag`: one DAG's flat arrays and their validation;
- :mod:`._criterion`: entropy and Gini as sums of per-class terms;
- :mod:`._schedules`: how wide each level may be;
- :mod:`._entries`: which samples each DAG trains on;
- :mod:`._tables`: the split tables, the only step of training that reads data;
- :mod:`._lsearch`: LSearch, optimising a level's splits and edges on histograms;
- :mod:`._clustersearch`: ClusterSearch, clustering a level's temporary children;
- :mod:`._baselines`: which leaves the paper's tree baselines split;
- :mod:`._grow`: the level-by-level loop that ties them together, and its steps;
- :mod:`._priority`: priority-scheduled trees, built on those steps;
- :mod:`._growth`: :func:`grow`, which runs one or the other;
- :mod:`._assembly`: flat DAG arrays from the levels' records, and pruning;
- :mod:`._predict`: traversal kernels;
- :mod:`._model`: :class:`Jungle`, a trained ensemble;
- :mod:`._classes`: the estimators' shared parameters and :class:`JungleClassifier`.
"""
from .._lazy import lazy_attributes
from ._assembly import NodeRecords, prune
from ._baselines import GROWTHS
from ._criterion import CRITERIA, impurity, split_gain
from ._dag import DAG, ModelError
from ._entries import Entries
from ._model import Jungle
from ._schedules import SCHEDULES, level_width, level_widths

__all__ = ["CRITERIA", "DAG", "Entries", "GROWTHS", "GrowParams", "GrowStats", "Jungle",
           "JungleBase", "JungleClassifier", "MAX_DEPTH", "ModelError", "NodeRecords",
           "SCHEDULES", "SEARCHES", "grow", "impurity", "level_width", "level_widths", "prune",
           "split_gain"]

_LAZY = {**{name: "._classes" for name in ("MAX_DEPTH", "SEARCHES", "JungleBase",
                                           "JungleClassifier")},
         **{name: "._grow" for name in ("GrowParams", "GrowStats")}, "grow": "._growth"}


__getattr__ = lazy_attributes(__name__, _LAZY)
