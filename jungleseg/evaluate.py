"""Segmentation scores: PASCAL VOC Jaccard from one confusion matrix over a test set."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .features import DepthFeatures
from .jungle import Jungle
from .segmentation import segment


def confusion_matrix(truth, predicted, classes, ignore=(255,)) -> np.ndarray:
    """Counts over label images: rows = true class, columns = predicted class.

    Parameters
    ----------
    truth, predicted : sequences of label images (arrays of the same shapes)
    classes : sequence of class values
    ignore : sequence of values
        True values never counted (void).

    Returns
    -------
    ndarray of shape (C, C + 1), int64
        The last column counts pixels predicted as none of the classes (false
        negatives all the same). Pixels whose true value is in ``ignore`` or not in
        ``classes`` are left out.

    Examples
    --------
    >>> confusion_matrix([np.array([0, 1, 255])], [np.array([0, 0, 1])], [0, 1])
    array([[1, 0, 0],
           [1, 0, 0]])
    """
    classes = np.asarray(classes)
    n = len(classes)
    total = np.zeros((n, n + 1), np.int64)
    for t, p in zip(truth, predicted):
        t = np.asarray(t).ravel()
        p = np.asarray(p).ravel()
        if t.shape != p.shape:
            raise ValueError(f"truth and prediction shapes differ: {t.shape} vs {p.shape}")
        ti = _index(t, classes, ignore)
        pi = _index(p, classes, ())
        keep = ti >= 0
        pi = np.where(pi >= 0, pi, n)
        counts = np.bincount(ti[keep] * (n + 1) + pi[keep], minlength=n * (n + 1))
        total += counts.reshape(n, n + 1)
    return total


def _index(values, classes, ignore):
    out = np.full(values.shape, -1, np.int64)
    for k, v in enumerate(classes):
        if v not in ignore:
            out[values == v] = k
    return out


@dataclass
class Scores:
    """Per-class Jaccard (IoU), their mean, global pixel accuracy, mean class accuracy."""

    per_class_jaccard: np.ndarray
    mean_jaccard: float
    pixel_accuracy: float
    mean_class_accuracy: float
    confusion: np.ndarray

    def as_dict(self, class_names=None) -> dict:
        """The scores under stable JSON keys; per-class Jaccard by class name."""
        names = class_names if class_names is not None else range(len(self.per_class_jaccard))
        return {
            "mean_jaccard": self.mean_jaccard,
            "per_class_jaccard": {str(k): float(v) for k, v in zip(names,
                                                                  self.per_class_jaccard)},
            "pixel_accuracy": self.pixel_accuracy,
            "mean_class_accuracy": self.mean_class_accuracy,
        }


def scores(confusion: np.ndarray) -> Scores:
    """VOC Jaccard ``TP / (TP + FP + FN)`` per class and its mean over classes that occur
    in the truth or the predictions; accuracies from the same matrix."""
    confusion = np.asarray(confusion, np.float64)
    n = confusion.shape[0]
    tp = np.diag(confusion[:, :n])
    truth = confusion.sum(axis=1)
    predicted = confusion[:, :n].sum(axis=0)
    union = truth + predicted - tp
    with np.errstate(invalid="ignore", divide="ignore"):
        jaccard = np.where(union > 0, tp / union, np.nan)
        recall = np.where(truth > 0, tp / truth, np.nan)
    return Scores(
        per_class_jaccard=jaccard,
        mean_jaccard=float(np.nanmean(jaccard)),
        pixel_accuracy=float(tp.sum() / max(confusion.sum(), 1)),
        mean_class_accuracy=float(np.nanmean(recall)),
        confusion=confusion.astype(np.int64),
    )


def evaluate(truth, predicted, classes, ignore=(255,)) -> Scores:
    """Scores of predicted label images against the truth.

    Parameters
    ----------
    truth, predicted, classes, ignore
        As for :func:`confusion_matrix`.

    Returns
    -------
    Scores

    Examples
    --------
    >>> evaluate([np.array([0, 1, 1])], [np.array([0, 1, 0])], [0, 1]).mean_jaccard
    0.5
    """
    return scores(confusion_matrix(truth, predicted, classes, ignore))


def evaluate_jungle(jungle: Jungle, images, labels, progress: bool = False
                    ) -> tuple[Scores, dict]:
    """Segment images with a jungle and score the result against their label images.

    Parameters
    ----------
    jungle : Jungle
        A trained or loaded model.
    images, labels : sequences of arrays
        Test images and their label images; 255 is void (and, for depth models, 0 the
        background, which is never classified).
    progress : bool
        Show a progress bar.

    Returns
    -------
    scores : Scores
    report : dict
        The stable keys of ``jungleseg evaluate --json``: ``mean_jaccard``,
        ``per_class_jaccard`` (by class name), ``pixel_accuracy``,
        ``mean_class_accuracy``, ``nodes``, ``bytes``, ``max_feature_evaluations``,
        ``classes`` and ``n_images``.
    """
    from tqdm import tqdm

    predicted = [segment(jungle, im, probabilities=False)[0] for im in tqdm(images, disable=not progress,
                                                       leave=False, desc="evaluating")]
    ignore = (255, 0) if isinstance(jungle.family, DepthFeatures) else (255,)
    result = evaluate(labels, predicted, jungle.classes, ignore=ignore)
    report = result.as_dict(jungle.class_names)
    report.update(nodes=jungle.node_count, bytes=jungle.nbytes,
                  max_feature_evaluations=jungle.max_feature_evaluations,
                  classes=[int(c) for c in jungle.classes], n_images=len(images))
    return result, report
