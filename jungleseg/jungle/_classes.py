"""scikit-learn style estimators built on the level-wise jungle trainer.

:class:`JungleBase` declares the parameters every jungle estimator shares;
:class:`JungleClassifier` classifies the rows of a matrix. The image estimator,
:class:`jungleseg.JungleSegmenter`, lives in :mod:`jungleseg.segmentation`.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import Integral, Interval, RealNotInt, StrOptions, register_with_sklearn
from ..features import Samples, TabularFeatures
from ..features._bins import fit_cuts, quantise, raw_thresholds
from ._baselines import GROWTHS
from ._criterion import CRITERIA, criterion_code
from ._entries import bootstrap, every_sample
from ._grow import GrowParams
from ._growth import grow
from ._model import PRIOR_POWER, Jungle
from ._schedules import SCHEDULES

register_with_sklearn()

SEARCHES = ("lsearch", "lsearch-stochastic", "clustersearch", "clustersearch-alternating")
#: The deepest level a DAG may grow to; ``max_depth=None`` grows this far at most.
MAX_DEPTH = 256


class JungleBase(BaseEstimator):
    """Parameters and checks shared by the tabular and the image estimators."""

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, 1000, closed="both")],
        "max_width": [Interval(Integral, 2, 1 << 20, closed="both"), None],
        "schedule": [StrOptions(SCHEDULES)],
        "max_depth": [Interval(Integral, 0, MAX_DEPTH, closed="both"), None],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "criterion": [StrOptions(CRITERIA)],
        "n_thresholds": [Interval(Integral, 1, 1 << 16, closed="both")],
        "lsearch_steps": [Interval(Integral, 0, None, closed="left")],
        "search": [StrOptions(SEARCHES)],
        "growth": [StrOptions(GROWTHS)],
        "max_nodes": [Interval(Integral, 1, None, closed="left"), None],
        "prior_power": PRIOR_POWER,
        "random_state": ["random_state"],
    }

    def _grow_params(self, n_classes: int, n_candidates: int, seed: int) -> GrowParams:
        """The trainer's parameters (after ``_validate_params``)."""
        if self.max_nodes is not None and self.growth != "priority":
            raise ValueError(f"max_nodes applies to growth='priority' only, not "
                             f"growth={self.growth!r}")
        return GrowParams(
            n_classes=n_classes,
            max_width=self.max_width,
            schedule=self.schedule,
            max_depth=MAX_DEPTH if self.max_depth is None else int(self.max_depth),
            min_samples_split=int(self.min_samples_split),
            min_samples_leaf=int(self.min_samples_leaf),
            criterion=criterion_code(self.criterion),
            n_candidates=n_candidates,
            n_thresholds=int(self.n_thresholds),
            lsearch_steps=int(self.lsearch_steps),
            search=self.search,
            growth=self.growth,
            max_nodes=None if self.max_nodes is None else int(self.max_nodes),
            dgmml=self.criterion == "dgmml",
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
    schedule : {'doubling', 'kinect'}
        How the width grows with depth up to M (see :func:`jungleseg.level_width`).
    max_depth : int or None
        Deepest level; None grows until leaves are pure or too small.
    min_samples_split : int
        A node splits only with at least this many samples.
    min_samples_leaf : int
        A split is valid only when both sides keep at least this many samples.
    criterion : {'entropy', 'gini', 'hellinger', 'dgmml'}
        The impurity whose sample-weighted sum over a level's children is minimised:
        entropy, Gini, or Hellinger (the inter-node Hellinger distance, iHD, against the
        uniform class distribution, for imbalanced classes); or 'dgmml', where each node's
        split is proposed in closed form (the dGMML weight picks the candidate feature,
        the classes' extremes place the threshold; no threshold search) and levels that
        merge use entropy. ``docs/how-it-works/criteria.md`` says how each enters split and branch
        steps.
    n_candidate_features : 'sqrt', int, float or None
        Candidate features drawn per node: sqrt(n_features), a count, a fraction of
        n_features, or all of them.
    n_thresholds : int
        Thresholds tried per candidate feature, at random quantiles of its responses.
    lsearch_steps : int
        Search budget per merging level: LSearch sweeps over the level's parents, or
        rounds of clustering and split steps for ClusterSearch's alternating variant.
    search : {'lsearch', 'lsearch-stochastic', 'clustersearch', 'clustersearch-alternating'}
        How a merging level chooses its splits and edges: LSearch with full sweeps over
        all parents, or the paper's cheaper variant that optimises randomly chosen single
        parents; or ClusterSearch, which keeps each parent's best tree split and clusters
        the two temporary children of every parent into the level's nodes (hard KL
        clustering: Lloyd iterations, then exact single moves), and its variant that
        alternates the clustering with split steps.
    growth : {'jungle', 'fixed-width-a', 'fixed-width-b', 'priority'}
        The model to grow with the same features and objective: a jungle (or, with
        ``max_width=None``, a standard forest), or one of the paper's bounded trees. Per
        level, fixed-width A splits only the ``width/2`` most energetic leaves
        (``|S| H(S)``), fixed-width B the ``width/2`` whose best splits lower the
        objective most; the other leaves stop growing. Priority-scheduled trees queue
        every open leaf by the objective reduction of its best split and split the top
        ``max_width`` of the queue per iteration (the width schedule does not apply).
    max_nodes : int or None
        With ``growth='priority'``: a tree stops growing when it holds this many nodes.
    bootstrap : bool
        Train each DAG on a bootstrap sample (multiplicities as integer weights).
    max_bins : int or None
        Each column is cut once into at most this many quantile bins (as LightGBM and
        XGBoost's ``hist`` do: a bin per distinct value when there are few), and training
        reads the bin codes; each split's threshold is then stored as the raw value where
        its bins part, so ``predict`` reads raw values and routes every training row as
        training did. None trains on the raw values.
    prior_power : float
        ``predict`` gives the class of the largest ``probability / share ** prior_power``,
        where ``share`` is the class's share of the training rows (kept as
        ``jungle_.metadata['class_shares']``): 0 the most probable class (the best
        accuracy), 1 the class frequencies divided out (balanced recall), values between
        part of the way. ``predict_proba`` is not changed.
    random_state : int, RandomState or None
        The same value, data and parameters give a bit-identical model whatever the
        number of threads.

    Attributes
    ----------
    classes_ : ndarray
        The class labels seen in ``fit``.
    n_features_in_ : int
        Columns of the training matrix.
    jungle_ : :class:`jungleseg.Jungle`
        The trained model (thresholds in raw feature values).
    bin_cuts_ : list of ndarray or None
        Per column, the values that part its bins (float32, increasing); None with
        ``max_bins=None``.
    node_count_ : int
        Split and leaf nodes of all DAGs together.
    model_bytes_ : int
        Byte size of the DAGs' flat arrays.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from jungleseg import JungleClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = JungleClassifier(n_estimators=4, max_width=8, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        **JungleBase._parameter_constraints,
        "n_candidate_features": [Interval(Integral, 1, None, closed="left"),
                                 Interval(RealNotInt, 0, 1, closed="right"),
                                 StrOptions({"sqrt"}), None],
        "bootstrap": ["boolean"],
        "max_bins": [Interval(Integral, 2, 256, closed="both"), None],
    }

    def __init__(self, n_estimators=8, max_width=256, schedule="doubling", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, criterion="entropy",
                 n_candidate_features="sqrt", n_thresholds=32, lsearch_steps=250,
                 search="lsearch", growth="jungle", max_nodes=None, bootstrap=False,
                 max_bins=256, prior_power=0.0, random_state=None):
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
        self.growth = growth
        self.max_nodes = max_nodes
        self.bootstrap = bootstrap
        self.max_bins = max_bins
        self.prior_power = prior_power
        self.random_state = random_state

    def _n_candidates(self, n_features: int) -> int:
        k = self.n_candidate_features
        if k is None:
            return n_features
        if k == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if isinstance(k, Integral):
            return int(min(k, n_features))
        return max(1, int(k * n_features))

    def fit(self, X: ArrayLike, y: ArrayLike) -> JungleClassifier:
        """Grow the jungle.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric training rows (converted to float32).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        JungleClassifier
            This estimator, fitted.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float32, order="C")
        check_classification_targets(y)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        seed = self._seed()
        params = self._grow_params(len(self.classes_), self._n_candidates(X.shape[1]), seed)
        family = TabularFeatures(X.shape[1])
        self.bin_cuts_ = None if self.max_bins is None else fit_cuts(X, self.max_bins, seed)
        store, samples = family.prepare(
            X if self.bin_cuts_ is None else quantise(X, self.bin_cuts_))
        samples = Samples(samples.image, samples.row, samples.col, y_index.astype(np.int32))
        n = X.shape[0]
        entries = (bootstrap(n, self.n_estimators, seed) if self.bootstrap
                   else every_sample(n, self.n_estimators))
        dags, self.grow_stats_ = grow(store.as_tuple(), samples, family, entries, params)
        if self.bin_cuts_ is not None:
            dags = [_with_raw_thresholds(dag, self.bin_cuts_) for dag in dags]
        shares = np.bincount(y_index, minlength=len(self.classes_)) / n
        self.jungle_ = Jungle(dags, self.classes_, family, self.get_params(),
                              {"seed": seed, "class_shares": [float(v) for v in shares]})
        self.node_count_ = self.jungle_.node_count
        self.model_bytes_ = self.jungle_.nbytes
        return self

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities, the average of the DAGs' leaf distributions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes), float32
        """
        check_is_fitted(self, "jungle_")
        X = validate_data(self, X, dtype=np.float32, order="C", reset=False)
        store, samples = self.jungle_.family.prepare(X)
        return self.jungle_.predict_proba(store, samples)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Most probable class of each row (with ``prior_power``, weighed by the class
        shares).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[self.jungle_.label_indices(proba, axis=1)]


def _with_raw_thresholds(dag, cuts: list[np.ndarray]):
    """``dag`` trained on bin codes, with each split's code threshold replaced by the raw
    value that splits the column's values the same way (:func:`raw_thresholds`). The
    spread of training responses (soft routing's scale, which tabular prediction does not
    use) was measured in codes, so it is dropped."""
    split = np.flatnonzero(dag.left >= 0)
    threshold = dag.threshold.copy()
    threshold[split] = raw_thresholds(dag.threshold[split],
                                      dag.feature_params[split, 0].astype(np.int64), cuts)
    return dataclasses.replace(dag, threshold=threshold, spread=None)
