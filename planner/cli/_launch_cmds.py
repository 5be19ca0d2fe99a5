"""`gpuplan launch …` and `plan --emit` (filled in by the launch work)."""
