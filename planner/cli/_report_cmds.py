"""`gpuplan report` (filled in by the team-budget work)."""
