"""sparsetir.ops on CUDA devices (work in progress)."""
