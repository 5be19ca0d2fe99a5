"""`gpuplan probe run|ingest|show`."""
