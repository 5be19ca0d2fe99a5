"""`gpuplan estimate` and `gpuplan plan`."""
