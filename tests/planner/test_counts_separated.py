"""Counts of a thousand and more in the model's and the search's words carry separators, as
the figures beside them do ("1536 spot p6-b200.48xlarge … 1,628 h" read as two styles)."""

from __future__ import annotations

import catalog
from planner.model import reference_cluster


def test_a_reference_cluster_of_thousands_of_nodes_says_the_count_with_separators():
    cluster = reference_cluster(catalog.load_catalog("packaged"), "H100", 16_384)
    assert cluster.nodes == 2_048
    assert "; 2,048 node(s);" in cluster.notes[0]
