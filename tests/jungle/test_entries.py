"""Entries: every sample, bootstrap samples, and each DAG's own images."""
import numpy as np
import pytest

from jungleseg.jungle._entries import bootstrap, by_image, every_sample, stack_entries


def test_every_dag_sees_every_sample_once():
    entries = every_sample(5, 3)
    assert entries.n_dags == 3
    np.testing.assert_array_equal(entries.sample, np.tile(np.arange(5), 3))
    assert np.all(entries.weight == 1)
    np.testing.assert_array_equal(entries.dag, np.repeat(np.arange(3), 5))


def test_bootstrap_weights_are_draw_counts_and_depend_on_the_seed():
    entries = bootstrap(200, 4, seed=7)
    for g in range(4):
        mine = entries.dag == g
        assert entries.weight[mine].sum() == 200  # n draws with replacement
        assert np.all(np.diff(entries.sample[mine]) > 0)  # each drawn sample once, sorted
    again = bootstrap(200, 4, seed=7)
    np.testing.assert_array_equal(entries.sample, again.sample)
    assert not np.array_equal(entries.sample, bootstrap(200, 4, seed=8).sample)
    # DAG g's draws do not depend on how many DAGs there are
    np.testing.assert_array_equal(bootstrap(200, 2, 7).sample, entries.sample[entries.dag < 2])


def test_each_dag_gets_its_own_images_while_they_last():
    sample_image = np.repeat(np.arange(6), 10)  # ten samples on each of six images
    entries = by_image(sample_image, 6, 2, 3, seed=0)
    per_dag = [set(sample_image[entries.sample[entries.dag == g]]) for g in range(3)]
    assert all(len(images) == 2 for images in per_dag)
    assert set.union(*per_dag) == set(range(6))  # two per DAG, none shared
    wrapped = by_image(sample_image, 6, 4, 2, seed=0)  # 8 wanted of 6: the order wraps
    second = set(sample_image[wrapped.sample[wrapped.dag == 1]])
    assert (len(second) == 4
            and len(second & set(sample_image[wrapped.sample[wrapped.dag == 0]])) == 2)


def test_bad_entries_are_refused():
    with pytest.raises(ValueError, match="positive"):
        stack_entries([([0, 1], [1, 0])])
    with pytest.raises(ValueError, match="at least one"):
        stack_entries([([0], [1]), ([], [])])
