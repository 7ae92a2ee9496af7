"""Benchmarks: each ``bench/bench_*.py`` module has ``run() -> dict`` of figures, mostly ratios
against a baseline measured in the same process (these machines are noisy)."""
