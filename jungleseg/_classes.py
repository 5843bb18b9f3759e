"""scikit-learn style estimators built on the level-wise jungle trainer."""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._criterion import criterion_code
from ._grow import GrowParams, grow, stack_entries
from ._schedules import SCHEDULES
from .features import TabularFeatures
from .model import Jungle

SEARCHES = ("lsearch", "lsearch-stochastic")
_DEPTH_LIMIT = 256  # levels grown when max_depth is None


def _check_int(name, value, low, allow_none=False):
    if value is None and allow_none:
        return
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


class JungleBase(BaseEstimator):
    """Parameters and checks shared by the tabular and the image estimators."""

    def _checked_params(self, n_classes: int, n_candidates: int, seed: int) -> GrowParams:
        _check_int("n_estimators", self.n_estimators, 1)
        _check_int("max_width", self.max_width, 2, allow_none=True)
        _check_int("max_depth", self.max_depth, 0, allow_none=True)
        _check_int("min_samples_split", self.min_samples_split, 2)
        _check_int("min_samples_leaf", self.min_samples_leaf, 1)
        _check_int("n_thresholds", self.n_thresholds, 1)
        _check_int("lsearch_steps", self.lsearch_steps, 0)
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, got {self.search!r}")
        return GrowParams(
            n_classes=n_classes,
            max_width=self.max_width,
            schedule=self.schedule,
            max_depth=_DEPTH_LIMIT if self.max_depth is None else int(self.max_depth),
            min_samples_split=int(self.min_samples_split),
            min_samples_leaf=int(self.min_samples_leaf),
            criterion=criterion_code(self.criterion),
            n_candidates=n_candidates,
            n_thresholds=int(self.n_thresholds),
            lsearch_steps=int(self.lsearch_steps),
            stochastic=self.search == "lsearch-stochastic",
            seed=seed,
        )

    def _seed(self) -> int:
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))


class JungleClassifier(ClassifierMixin, JungleBase):
    """Decision jungle classifier: an ensemble of rooted decision DAGs.

    Each DAG grows level by level; when a level may hold fewer nodes than twice its
    split parents, LSearch chooses the parents' splits and which child each edge
    enters, so that nodes merge (Shotton et al., NIPS 2013). With ``max_width=None``
    no level is limited and the model is a standard forest of trees.

    Parameters
    ----------
    n_estimators : int
        Number of DAGs.
    max_width : int or None
        M, the largest number of nodes on a level; None for unlimited (trees).
    schedule : {'doubling', 'kinect', 'constant'}
        How the width grows with depth up to M (see :func:`jungleseg.level_width`).
    max_depth : int or None
        Deepest level; None grows until leaves are pure or too small.
    min_samples_split, min_samples_leaf : int
        A node splits only with at least ``min_samples_split`` samples and when both
        sides of its split keep at least ``min_samples_leaf``.
    criterion : {'entropy', 'gini'}
    n_candidate_features : 'sqrt', int, float or None
        Candidate features drawn per node: sqrt(n_features), a count, a fraction of
        n_features, or all of them.
    n_thresholds : int
        Thresholds tried per candidate feature, at random quantiles of its responses.
    lsearch_steps : int
        LSearch budget per level, in sweeps over the level's parents.
    search : {'lsearch', 'lsearch-stochastic'}
        Full sweeps over all parents, or the paper's cheaper variant that optimises
        randomly chosen single parents.
    bootstrap : bool
        Train each DAG on a bootstrap sample (multiplicities as integer weights).
    random_state : int, RandomState or None
        The same value, data and parameters give a bit-identical model whatever the
        number of threads.

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    jungle_ : :class:`jungleseg.Jungle`
    node_count_ : int
        Split and leaf nodes of all DAGs together.
    model_bytes_ : int
        Byte size of the DAGs' flat arrays.
    """

    def __init__(self, n_estimators=8, max_width=256, schedule="doubling", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, criterion="entropy",
                 n_candidate_features="sqrt", n_thresholds=32, lsearch_steps=250,
                 search="lsearch", bootstrap=False, random_state=None):
        self.n_estimators = n_estimators
        self.max_width = max_width
        self.schedule = schedule
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.n_candidate_features = n_candidate_features
        self.n_thresholds = n_thresholds
        self.lsearch_steps = lsearch_steps
        self.search = search
        self.bootstrap = bootstrap
        self.random_state = random_state

    def _n_candidates(self, n_features: int) -> int:
        k = self.n_candidate_features
        if k is None:
            return n_features
        if k == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 1:
            return int(min(k, n_features))
        if isinstance(k, numbers.Real) and 0 < k <= 1:
            return max(1, int(k * n_features))
        raise ValueError(
            "n_candidate_features must be 'sqrt', None, an int >= 1 or a float in (0, 1], "
            f"got {k!r}")

    def fit(self, X, y):
        """Grow the jungle on a numeric matrix X and class labels y."""
        X, y = validate_data(self, X, y, dtype=np.float32, order="C")
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        seed = self._seed()
        params = self._checked_params(len(self.classes_), self._n_candidates(X.shape[1]), seed)
        family = TabularFeatures(X.shape[1])
        store, samples = family.prepare(X)
        samples = type(samples)(samples.image, samples.row, samples.col,
                                y_index.astype(np.int32))
        entry_sample, entry_weight, entry_dag = self._entries(X.shape[0], seed)
        dags, self.grow_stats_ = grow(store.as_tuple(), samples, family.spec(), family.n_params,
                                      entry_sample, entry_weight, entry_dag, params)
        self.jungle_ = Jungle(dags, self.classes_, family, self.get_params(), {"seed": seed})
        self.node_count_ = self.jungle_.node_count
        self.model_bytes_ = self.jungle_.nbytes
        return self

    def _entries(self, n: int, seed: int):
        """Per DAG, which rows it trains on and with what multiplicity."""
        per_dag = []
        for g in range(self.n_estimators):
            if self.bootstrap:
                rng = np.random.default_rng([seed, g])
                counts = np.bincount(rng.integers(0, n, n), minlength=n)
                rows = np.flatnonzero(counts)
                per_dag.append((rows, counts[rows]))
            else:
                per_dag.append((np.arange(n), np.ones(n, np.int64)))
        return stack_entries(per_dag)

    def predict_proba(self, X):
        """Class probabilities, the average of the DAGs' leaf distributions."""
        check_is_fitted(self, "jungle_")
        X = validate_data(self, X, dtype=np.float32, order="C", reset=False)
        store, samples = self.jungle_.family.prepare(X)
        return self.jungle_.predict_proba(store, samples)

    def predict(self, X):
        """Most probable class of each row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
