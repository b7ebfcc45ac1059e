"""Benchmarks: each module runs as `python -m bench.<name> [--size small|full]` and prints JSON lines."""
