"""The matrix loader: bundled cora, the search path, errors, and the shared matrices."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from sparsetir import data

# name -> (rows, cols, nnz), from ../shared/data/README.md
SHARED_MATRICES = {
    "citeseer": (3327, 3327, 9228),
    "pubmed": (19717, 19717, 88651),
    "email_enron": (36692, 36692, 367662),
    "soc_slashdot0902": (82168, 82168, 948464),
    "bcsstk16": (4884, 4884, 290378),
    "rgg_n_2_15_s0": (32768, 32768, 320480),
}


def assert_canonical_csr(matrix) -> None:
    assert isinstance(matrix, scipy.sparse.csr_matrix)
    assert matrix.indptr.dtype == np.int32
    assert matrix.indices.dtype == np.int32
    assert matrix.dtype == np.float32
    assert matrix.has_canonical_format


def save(path, matrix) -> None:
    scipy.sparse.save_npz(path, matrix, compressed=False)


def small_csr(**dtypes) -> scipy.sparse.csr_matrix:
    """A 3x4 canonical CSR matrix with an empty row; dtypes override the arrays' types."""
    indptr = np.array([0, 2, 2, 3], dtype=dtypes.get("indptr", np.int32))
    indices = np.array([1, 3, 0], dtype=dtypes.get("indices", np.int32))
    values = np.array([1.0, 2.0, 3.0], dtype=dtypes.get("values", np.float32))
    return scipy.sparse.csr_matrix((values, indices, indptr), shape=(3, 4))


def test_cora_is_bundled():
    assert data.find("cora") == data.PACKAGE_DIR / "cora.npz"
    cora = data.load("cora")
    assert cora.shape == (2708, 2708)
    assert cora.nnz == 10556
    assert_canonical_csr(cora)
    assert np.all(cora.data == 1.0)
    assert (cora != cora.T).nnz == 0, "cora's pattern is symmetric"


def test_available_lists_bundled_and_given_dirs(tmp_path):
    save(tmp_path / "tiny.npz", small_csr())
    names = data.available(search_dirs=[tmp_path])
    assert "cora" in names and "tiny" in names
    assert names == sorted(names)


def test_load_from_search_dirs(tmp_path):
    save(tmp_path / "tiny.npz", small_csr())
    tiny = data.load("tiny", search_dirs=[tmp_path])
    assert_canonical_csr(tiny)
    np.testing.assert_array_equal(tiny.toarray(), small_csr().toarray())


def test_package_comes_first(tmp_path):
    save(tmp_path / "cora.npz", small_csr())
    assert data.load("cora", search_dirs=[tmp_path]).shape == (2708, 2708)


def test_environment_directory(tmp_path, monkeypatch):
    save(tmp_path / "tiny.npz", small_csr())
    monkeypatch.setenv(data.ENV_VAR, str(tmp_path))
    assert data.find("tiny") == tmp_path.resolve() / "tiny.npz"


def test_missing_matrix_names_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        data.load("no_such_matrix", search_dirs=[tmp_path])
    message = str(info.value)
    assert "'no_such_matrix'" in message
    assert str(data.PACKAGE_DIR) in message
    assert str(tmp_path.resolve()) in message
    assert data.ENV_VAR in message


@pytest.mark.parametrize("name", ["", "../cora", "sub/cora", ".hidden", "cora.npz"])
def test_names_are_plain(name):
    with pytest.raises(ValueError, match="load_file"):
        data.load(name)


@pytest.mark.parametrize(
    "matrix, problem",
    [
        (small_csr(values=np.float64), "values are float64"),
        (small_csr().tocoo(), "stored in COO format"),
        (
            scipy.sparse.csr_matrix((np.ones(2, np.float32), [3, 1], [0, 2]), shape=(1, 4)),
            "unsorted or repeated",
        ),
        (
            scipy.sparse.csr_matrix((np.ones(1, np.float32), [5], [0, 1]), shape=(1, 2)),
            "malformed CSR",
        ),
    ],
    ids=["float64-values", "coo", "unsorted", "index-out-of-range"],
)
def test_non_canonical_files_are_refused(tmp_path, matrix, problem):
    path = tmp_path / "bad.npz"
    save(path, matrix)
    with pytest.raises(ValueError, match=problem) as info:
        data.load_file(path)
    assert str(path) in str(info.value)


def test_int64_indices_are_refused(tmp_path, monkeypatch):
    # scipy itself narrows int64 index arrays whose values fit in int32, so only a matrix with
    # more than 2**31 nonzeros keeps them; fake one instead of writing it.
    wide = small_csr()
    wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
    monkeypatch.setattr(scipy.sparse, "load_npz", lambda path: wide)
    with pytest.raises(ValueError, match="index arrays are int64"):
        data.load_file(tmp_path / "wide.npz")


def test_not_a_sparse_file(tmp_path):
    path = tmp_path / "dense.npz"
    np.savez(path, x=np.zeros(3))
    with pytest.raises(ValueError, match="scipy.sparse.save_npz"):
        data.load_file(path)


@pytest.mark.parametrize("name", sorted(SHARED_MATRICES))
def test_shared_matrices(shared_data_dir, name):
    matrix = data.load(name, search_dirs=[shared_data_dir])
    rows, cols, nnz = SHARED_MATRICES[name]
    assert matrix.shape == (rows, cols)
    assert matrix.nnz == nnz
    assert_canonical_csr(matrix)


def test_bundled_cora_matches_shared(shared_data_dir):
    bundled = data.load("cora")
    shared = data.load_file(shared_data_dir / "cora.npz")
    assert (bundled != shared).nnz == 0
