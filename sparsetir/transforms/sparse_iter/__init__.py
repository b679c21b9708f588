"""The steps of LowerSparseIter (``transforms/lower_sparse_iter.py`` runs them in order).

- ``context``: names, and what lowering one function accumulates (spans, searched axes, scratch);
- ``header``: stage-II parameters, axes (with dense twins), structure and value buffers;
- ``levels``: an iteration's loops grouped into blocks, fused axes included, and the blocks built;
- ``merge``: co-iteration (``T.intersect`` / ``T.union``) as a pointer walk over sorted rows;
- ``search``: binary-search helper blocks (coordinate lookups, fused row recovery);
- ``positions``: buffer accesses rewritten from coordinates to positions.
"""
