"""Convert the Planetoid node data (features, labels, standard split) into sparsetir's ``.npz``.

Developer tool, run once per data set; the results ship as ``sparsetir/data/<name>_nodes.npz``
(provenance in ``sparsetir/data/README.md``). The inputs are the ``ind.<name>.*`` files of
github:kimiyoung/planetoid (commit af6abf468a772cc055bec88c52e4d6f51b7c37e3), Python 2 pickles
of SciPy/NumPy arrays: this script unpickles them, so run it on those files only. The package
itself never unpickles anything: it reads the ``.npz`` with ``allow_pickle=False``.

Node order is the graph's (``ind.<name>.graph`` keys, as ``sparsetir/data/<name>.npz``): the
test nodes' rows are moved to their ids, as the GCN paper's code and PyG's ``Planetoid`` do;
test ids missing from the file (CiteSeer's isolated nodes) get zero features and no label
(label -1, in no split).

    python tools/planetoid_features.py DIR NAME OUT.npz
"""

from __future__ import annotations

import argparse
import pickle
import sys

import numpy as np
import scipy.sparse as sp


def _load(directory: str, name: str, part: str):
    with open(f"{directory}/ind.{name}.{part}", "rb") as f:
        return pickle.load(f, encoding="latin1")


def convert(directory: str, name: str) -> dict:
    x, tx, allx = (sp.csr_matrix(_load(directory, name, p)) for p in ("x", "tx", "allx"))
    y, ty, ally = (np.asarray(_load(directory, name, p)) for p in ("y", "ty", "ally"))
    test_ids = np.loadtxt(f"{directory}/ind.{name}.test.index", dtype=np.int64)
    graph = _load(directory, name, "graph")
    n = max(max(graph), max(max(v) for v in graph.values() if v)) + 1
    first_test = allx.shape[0]
    test_range = np.arange(test_ids.min(), test_ids.max() + 1)
    # Test rows in file order go to their ids; ids of the range absent from the file stay empty.
    tx_full = sp.lil_matrix((test_range.size, tx.shape[1]), dtype=np.float32)
    tx_full[test_ids - test_ids.min()] = tx
    ty_full = np.zeros((test_range.size, ty.shape[1]))
    ty_full[test_ids - test_ids.min()] = ty
    features = sp.vstack([allx, tx_full.tocsr()]).tocsr().astype(np.float32)
    onehot = np.vstack([ally, ty_full])
    if features.shape[0] != n or first_test + test_range.size != n:
        raise SystemExit(f"{name}: {features.shape[0]} feature rows for {n} graph nodes")
    labels = np.where(onehot.sum(1) > 0, onehot.argmax(1), -1).astype(np.int64)
    train = np.zeros(n, bool)
    train[: y.shape[0]] = True
    val = np.zeros(n, bool)
    val[y.shape[0]: y.shape[0] + 500] = True
    test = np.zeros(n, bool)
    test[test_ids] = True
    features.sort_indices()
    return {
        "x_indptr": features.indptr.astype(np.int32), "x_indices": features.indices.astype(np.int32),
        "x_data": features.data, "x_shape": np.array(features.shape, np.int64),
        "y": labels, "train_mask": train, "val_mask": val, "test_mask": test,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("name")
    parser.add_argument("out")
    args = parser.parse_args(argv)
    arrays = convert(args.directory, args.name)
    np.savez_compressed(args.out, **arrays)
    print(f"{args.out}: {arrays['x_shape'].tolist()} features, {int(arrays['x_data'].size)} stored, "
          f"{int((arrays['y'] >= 0).sum())} labelled, split {int(arrays['train_mask'].sum())}/"
          f"{int(arrays['val_mask'].sum())}/{int(arrays['test_mask'].sum())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
